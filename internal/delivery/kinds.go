package delivery

import "github.com/notifyd/notifyd/internal/notify"

// KindChannel is the channel of the provider kind with id kind, and
// whether that kind is known.
func (e *Engine) KindChannel(kind string) (notify.Channel, bool) {
	k, ok := e.kinds[kind]
	if !ok {
		return "", false
	}
	return k.Channel, true
}

// KindIDs lists the known provider kinds, sorted.
func (e *Engine) KindIDs() []string { return e.kinds.IDs() }
