package sends

import (
	"context"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
)

// templateMemo is a build's reads (Lookup) with the template reads
// answered once per template and locale: the items of one build (a bulk
// send, a batch of workflow send steps) mostly share their template, and
// these were two of an item's three round trips. Only errors of a read
// that found nothing are remembered; others are the build's failure.
//
// It also answers the items' sends by recipient id from one read of all
// their contexts made up front (prefetch): one statement for the
// profiles of a batch of workflow send steps instead of one each.
type templateMemo struct {
	notify.Tx
	templates map[string]templateRead
	versions  map[string]versionRead
	contexts  map[string]*notify.SendContext
}

type templateRead struct {
	t   *notify.Template
	err error
}

type versionRead struct {
	v   *notify.TemplateVersion
	err error
}

func newTemplateMemo(tx notify.Tx) *templateMemo {
	return &templateMemo{Tx: tx, templates: map[string]templateRead{}, versions: map[string]versionRead{},
		contexts: map[string]*notify.SendContext{}}
}

// prefetch reads the contexts of ins's sends by recipient id at once.
func (m *templateMemo) prefetch(ctx context.Context, ws string, ins []*SendInput) error {
	var qs []notify.SendContextQuery
	for _, in := range ins {
		if q, ok := sendContextQuery(in); ok && q.RecipientExternalID != "" {
			qs = append(qs, q)
		}
	}
	if len(qs) < 2 {
		return nil
	}
	scs, err := m.Tx.FindSendContexts(ctx, ws, qs)
	if err != nil {
		return err
	}
	for i, q := range qs {
		m.contexts[contextKey(ws, q)] = scs[i]
	}
	return nil
}

func contextKey(ws string, q notify.SendContextQuery) string {
	k := ws + "\x00" + q.RecipientExternalID + "\x00" + q.CategoryKey
	for _, ch := range q.Channels {
		k += "\x00" + string(ch)
	}
	if q.Consents {
		k += "\x00consents"
	}
	return k
}

// FindSendContext answers a prefetched context once: a second send of the
// same query in the build reads again.
func (m *templateMemo) FindSendContext(ctx context.Context, ws string, q notify.SendContextQuery) (*notify.SendContext, error) {
	k := contextKey(ws, q)
	if sc, ok := m.contexts[k]; ok {
		delete(m.contexts, k)
		return sc, nil
	}
	return m.Tx.FindSendContext(ctx, ws, q)
}

func (m *templateMemo) FindTemplateByCode(ctx context.Context, ws, code string, ch notify.Channel) (*notify.Template, error) {
	k := ws + "\x00" + code + "\x00" + string(ch)
	if r, ok := m.templates[k]; ok {
		return r.t, r.err
	}
	t, err := m.Tx.FindTemplateByCode(ctx, ws, code, ch)
	if err == nil || notify.IsNotFound(err) {
		m.templates[k] = templateRead{t, err}
	}
	return t, err
}

func (m *templateMemo) FindPublishedTemplateVersion(ctx context.Context, ws, templateID string, locales []string) (*notify.TemplateVersion, error) {
	k := ws + "\x00" + templateID + "\x00" + strings.Join(locales, "\x00")
	if r, ok := m.versions[k]; ok {
		return r.v, r.err
	}
	v, err := m.Tx.FindPublishedTemplateVersion(ctx, ws, templateID, locales)
	if err == nil || notify.IsNotFound(err) {
		m.versions[k] = versionRead{v, err}
	}
	return v, err
}
