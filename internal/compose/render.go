package compose

import (
	"context"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/render"
	"github.com/notifyd/notifyd/internal/usecase"
)

// LayoutSlot is the placeholder of a layout that the message body fills.
const LayoutSlot = "content"

// message is the rendered content of a notification.
type Message struct {
	Title, Text, HTML string
}

// Render is the one rendering of a message built from a template,
// shared by sends, OTP sends, test-sends and the template preview:
// {{name}} placeholders of title, text and HTML are replaced from vars
// (SPEC send rule 3.5; values HTML-escaped in the HTML part), then the
// version's layout, when it has one, wraps the text part and the HTML part
// (when the message has one) with its header and footer, whose own
// placeholders are replaced from vars too. The body is substituted before
// it is wrapped, so a value holding "{{...}}" is never substituted again,
// and a variable named "content" does not reach the slot.
//
// Each part, layout included, is held to its bound (MaxContentTitle,
// MaxContentText, MaxContentHTML) while it is rendered: over it, the
// message is refused naming prefix+"content.<part>". So is a title a
// variable breaks onto two lines (an email subject).
func Render(m Message, l *notify.Layout, vars map[string]string, prefix string) (Message, error) {
	var out Message
	var ok bool
	if out.Title, ok = render.Substitute(m.Title, vars, MaxContentTitle); !ok {
		return Message{}, TooLarge(prefix+"content.title", MaxContentTitle, "template variables")
	}
	// A variable must not break the title (an email subject) either.
	if err := usecase.OneLine(prefix+"content.title", out.Title); err != nil {
		return Message{}, err
	}
	if out.Text, ok = render.Substitute(m.Text, vars, MaxContentText); !ok {
		return Message{}, TooLarge(prefix+"content.text", MaxContentText, "template variables")
	}
	var esc map[string]string
	if m.HTML != "" {
		esc = render.HTMLEscapeVars(vars)
		if out.HTML, ok = render.Substitute(m.HTML, esc, MaxContentHTML); !ok {
			return Message{}, TooLarge(prefix+"content.html", MaxContentHTML, "template variables")
		}
	}
	if l == nil {
		return out, nil
	}
	if _, _, n := render.Slot(l.Text, LayoutSlot); n == 1 {
		if out.Text, ok = render.Fill(l.Text, LayoutSlot, out.Text, vars, MaxContentText); !ok {
			return Message{}, TooLarge(prefix+"content.text", MaxContentText, "template variables")
		}
	}
	if _, _, n := render.Slot(l.HTML, LayoutSlot); n == 1 && out.HTML != "" {
		if out.HTML, ok = render.Fill(l.HTML, LayoutSlot, out.HTML, esc, MaxContentHTML); !ok {
			return Message{}, TooLarge(prefix+"content.html", MaxContentHTML, "template variables")
		}
	}
	return out, nil
}

// Parts lists what Render substitutes for m and l: the
// message's title, text and HTML, and the layout's header and footer of
// each part it wraps.
func Parts(m Message, l *notify.Layout) []string {
	parts := []string{m.Title, m.Text, m.HTML}
	if l == nil {
		return parts
	}
	if before, after, n := render.Slot(l.Text, LayoutSlot); n == 1 {
		parts = append(parts, before, after)
	}
	if before, after, n := render.Slot(l.HTML, LayoutSlot); n == 1 && m.HTML != "" {
		parts = append(parts, before, after)
	}
	return parts
}

// missingVariables lists the placeholder names (found by names) of parts
// that vars has no value for, each once, in order of first appearance.
func MissingVariables(vars map[string]string, names func(string) []string, parts ...string) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, p := range parts {
		for _, n := range names(p) {
			if _, ok := vars[n]; !ok && !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out
}

// PublishedVersion reads the version a send in locale uses (issue 21):
// the highest published version of the first tag of LocaleLookup(locale)
// that has one, else the highest published version of the template's
// default locale (versions without a locale). Without a locale that is
// SPEC send rule 3.3 unchanged. None at all is a 400. The store reads the
// bodies of that version only (issue 29: a template may hold many large
// versions).
func PublishedVersion(ctx context.Context, tx notify.Tx, t *notify.Template, locale string) (*notify.TemplateVersion, error) {
	v, err := tx.FindPublishedTemplateVersion(ctx, t.WorkspaceID, t.ID, LocaleLookup(locale))
	if !notify.IsNotFound(err) {
		return v, err
	}
	if locale != "" {
		return nil, notify.Invalid("Template %s has no published version for locale %s or its default locale", t.Code, locale)
	}
	return nil, notify.Invalid("Template %s has no published version", t.Code)
}

// versionLayout reads the layout v names, nil when none.
func VersionLayout(ctx context.Context, tx notify.Tx, ws string, v *notify.TemplateVersion) (*notify.Layout, error) {
	if v.LayoutID == "" {
		return nil, nil
	}
	return tx.FindLayout(ctx, ws, v.LayoutID)
}
