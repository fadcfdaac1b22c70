package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/redact"
)

// Problem is an RFC 9457 problem body with SPEC's extra fields.
type Problem struct {
	Type      string `json:"type"`
	Title     string `json:"title"`
	Status    int    `json:"status"`
	Detail    string `json:"detail"`
	Code      string `json:"code"`
	Instance  string `json:"instance"`
	Timestamp string `json:"timestamp"`
}

// writeError renders err as problem+json. Domain errors keep their code
// and detail; anything else is a 500 whose cause goes only to the log.
func (a *API) writeError(w http.ResponseWriter, r *http.Request, err error) {
	e, ok := notify.AsError(err)
	if !ok {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			e = notify.Errorf(notify.CodePayloadTooLarge, "Request body must be at most %d bytes", mbe.Limit)
		} else if errors.Is(err, notify.ErrUnavailable) {
			// A database restart is not a server bug: the client retries.
			a.log.WarnContext(r.Context(), "database unavailable", "path", redact.Path(r.URL.Path), "err", err)
			e = notify.Errorf(notify.CodeUnavailable, "The database is unavailable; retry shortly")
			e.RetryAfter = unavailableRetryAfter
		} else {
			a.log.ErrorContext(r.Context(), "internal error", "path", redact.Path(r.URL.Path), "err", err)
			e = notify.Errorf(notify.CodeInternal, "An internal error occurred")
		}
	}
	a.WriteProblem(w, r, e)
}

// unavailableRetryAfter is the Retry-After of a 503 while the database
// is away: a PostgreSQL restart takes seconds.
const unavailableRetryAfter = 2 * time.Second

// WriteProblem writes one domain error as problem+json.
func (a *API) WriteProblem(w http.ResponseWriter, r *http.Request, e *notify.Error) {
	p := Problem{
		Type:      a.baseURL + "/errors/" + strings.ToLower(e.Code),
		Title:     e.Title(),
		Status:    e.Status(),
		Detail:    e.Detail,
		Code:      e.Code,
		Instance:  redact.Path(r.URL.Path),
		Timestamp: Timestamp(a.now()),
	}
	if p.Status == http.StatusTooManyRequests {
		a.limits.Reject(e.Code)
	}
	if e.RetryAfter > 0 { // whole seconds, rounded up (RFC 9110)
		w.Header().Set("Retry-After", strconv.FormatInt(int64((e.RetryAfter+time.Second-1)/time.Second), 10))
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}

// Timestamp formats t as RFC 3339 UTC with milliseconds (API-DECISIONS 1).
func Timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// TimestampPtr is Timestamp for optional times; nil stays null.
func TimestampPtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := Timestamp(*t)
	return &s
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if v != nil {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(v)
	}
}

// envelope wraps a Notification API payload (SPEC "API families").
type envelope struct {
	Data any          `json:"data"`
	Meta envelopeMeta `json:"meta"`
}

type envelopeMeta struct {
	Timestamp string `json:"timestamp"`
}

// rawJSON embeds stored JSON text as is; invalid text becomes a string.
func rawJSON(s string) any {
	if s == "" {
		return nil
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	return s
}
