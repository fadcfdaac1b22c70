package compose

import (
	"unicode/utf8"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Size bounds of a message and of what fills it (issue 29; SPEC leaves
// them open but for content.title, and the 1 MB body bound alone let a
// request multiply into gigabytes through {{name}} placeholders). The
// text and HTML bounds are those of a template version and of a campaign
// (SPEC "Campaign"). A rendered part is held to its bound while it is
// rendered (render.Substitute), so no send, preview, test-send, OTP or
// campaign recipient ever allocates more than its bound.
const (
	MaxContentTitle = 200
	MaxContentText  = 100_000
	MaxContentHTML  = 500_000

	MaxTemplateVariables     = 200
	MaxTemplateVariableName  = 200
	MaxTemplateVariableValue = 10_000

	MaxMetadata      = 100
	MaxMetadataKey   = 200
	MaxMetadataValue = 2_000
)

// detailRendered is the detail of a part whose rendering is over its
// bound: field, bound, and what was put in ("template variables", or for
// a campaign "subscriber attributes").
const detailRendered = "%s must be at most %d characters after %s are put in"

// RenderedTooLarge refuses a rendered part over its bound. It is a field
// rule: a bulk send refuses the whole call with it (SPEC: an item failing
// field validation rejects the request), where other failures of
// acceptance leave the item out.
type RenderedTooLarge struct{ Err *notify.Error }

func (e *RenderedTooLarge) Error() string { return e.Err.Error() }
func (e *RenderedTooLarge) Unwrap() error { return e.Err }

// TooLarge is the 400 of a rendered part over its bound (detailRendered).
func TooLarge(field string, limit int, what string) error {
	return &RenderedTooLarge{notify.Invalid(detailRendered, field, limit, what)}
}

// checkStringMap bounds a map of strings (templateVariables, metadata):
// how many entries, how long a key and a value may be, in characters.
// noun names an entry in the detail ("variables", "entries"), keyNoun a
// key ("names", "keys"). Keys are checked before values and no entry is
// named, so the detail does not depend on the map's order.
func checkStringMap(field string, m map[string]string, noun, keyNoun string, maxN, maxKey, maxValue int) error {
	if len(m) > maxN {
		return notify.Invalid("%s must hold at most %d %s", field, maxN, noun)
	}
	for k := range m {
		if utf8.RuneCountInString(k) > maxKey {
			return notify.Invalid("%s %s must be at most %d characters", field, keyNoun, maxKey)
		}
	}
	for _, v := range m {
		if utf8.RuneCountInString(v) > maxValue {
			return notify.Invalid("%s values must be at most %d characters", field, maxValue)
		}
	}
	return nil
}

// checkContent bounds the content of a send, a fallback step or a
// test-send as the caller sent it, before any rendering: title, text and
// HTML each to the bound of its rendering, and the template variables; f
// names the field (with a bulk item's or a step's prefix).
func CheckContent(f func(string) string, title, text, html *string, vars map[string]string) error {
	for _, c := range []struct {
		name string
		v    *string
		n    int
	}{{"content.title", title, MaxContentTitle}, {"content.text", text, MaxContentText}, {"content.html", html, MaxContentHTML}} {
		if c.v == nil {
			continue
		}
		if err := usecase.MaxLen(f(c.name), *c.v, c.n); err != nil {
			return err
		}
	}
	return CheckVariables(f("content.templateVariables"), vars)
}

// checkVariables bounds the templateVariables of a send, a fallback
// step, a test-send, an OTP send or a template preview.
func CheckVariables(field string, vars map[string]string) error {
	return checkStringMap(field, vars, "variables", "names", MaxTemplateVariables, MaxTemplateVariableName, MaxTemplateVariableValue)
}

// checkMetadata bounds a send's metadata.
func CheckMetadata(field string, m map[string]string) error {
	return checkStringMap(field, m, "entries", "keys", MaxMetadata, MaxMetadataKey, MaxMetadataValue)
}
