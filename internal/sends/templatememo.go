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
type templateMemo struct {
	notify.Tx
	templates map[string]templateRead
	versions  map[string]versionRead
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
	return &templateMemo{Tx: tx, templates: map[string]templateRead{}, versions: map[string]versionRead{}}
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
