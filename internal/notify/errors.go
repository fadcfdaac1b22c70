package notify

import (
	"errors"
	"fmt"
	"time"
)

// Error codes of SPEC "Errors". The code decides the HTTP status in one
// place (Status), so the domain never builds transport errors.
const (
	CodeValidation       = "SVC-40000"
	CodeUnauthorized     = "SVC-40100"
	CodeForbidden        = "SVC-40300"
	CodeNotFound         = "SVC-40400"
	CodeConflict         = "SVC-40900"
	CodeTooManyRequests  = "SVC-42900"
	CodeWorkspaceLimit   = "SVC-4290"
	CodeAPIKeyLimit      = "SVC-4291"
	CodeInternal         = "SVC-50000"
	CodeProviderFailed   = "SVC-50200"
	CodePayloadTooLarge  = "SVC-41300"
	CodeMethodNotAllowed = "SVC-40500"
	// CodeUnavailable is ours: the database cannot be reached (a restart,
	// a failover); the request changed nothing and may be retried.
	CodeUnavailable = "SVC-50300"
)

// catalogue maps a code to its HTTP status and title.
var catalogue = map[string]struct {
	status int
	title  string
}{
	CodeValidation:       {400, "Bad Request"},
	CodeUnauthorized:     {401, "Unauthorized"},
	CodeForbidden:        {403, "Forbidden"},
	CodeNotFound:         {404, "Not Found"},
	CodeMethodNotAllowed: {405, "Method Not Allowed"},
	CodeConflict:         {409, "Conflict"},
	CodePayloadTooLarge:  {413, "Payload Too Large"},
	CodeTooManyRequests:  {429, "Too Many Requests"},
	CodeWorkspaceLimit:   {429, "Too Many Requests"},
	CodeAPIKeyLimit:      {429, "Too Many Requests"},
	CodeInternal:         {500, "Internal Server Error"},
	CodeProviderFailed:   {502, "Bad Gateway"},
	CodeUnavailable:      {503, "Service Unavailable"},
}

// Error is a domain error with a catalogue code and a human-readable detail
// meant for the API user. Internal causes stay in the logs.
type Error struct {
	Code   string
	Detail string
	// RetryAfter, when set, is sent as the Retry-After header (the login
	// throttle tells how long to wait).
	RetryAfter time.Duration
}

func (e *Error) Error() string { return e.Code + ": " + e.Detail }

// Status is the HTTP status of the error's code.
func (e *Error) Status() int {
	if c, ok := catalogue[e.Code]; ok {
		return c.status
	}
	return 500
}

// Title is the short title of the error's code.
func (e *Error) Title() string {
	if c, ok := catalogue[e.Code]; ok {
		return c.title
	}
	return "Internal Server Error"
}

// Errorf builds a domain error.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Detail: fmt.Sprintf(format, args...)}
}

// Invalid is a 400 validation error.
func Invalid(format string, args ...any) *Error { return Errorf(CodeValidation, format, args...) }

// NotFound is a 404; records of other workspaces answer the same.
func NotFound(what string) *Error { return Errorf(CodeNotFound, "%s not found", what) }

// Forbidden is a 403.
func Forbidden(format string, args ...any) *Error { return Errorf(CodeForbidden, format, args...) }

// Conflict is a 409.
func Conflict(format string, args ...any) *Error { return Errorf(CodeConflict, format, args...) }

// Unauthorized is a 401.
func Unauthorized(format string, args ...any) *Error {
	return Errorf(CodeUnauthorized, format, args...)
}

// ErrNotFound is what store lookups wrap when no row matches; service turns
// it into a NotFound naming the record.
var ErrNotFound = errors.New("not found")

// ErrConflict is what store writes wrap on a unique-key violation.
var ErrConflict = errors.New("conflict")

// ErrUnavailable is what the store wraps when the database cannot be
// reached or is shutting down: nothing was written, retrying may succeed.
var ErrUnavailable = errors.New("database unavailable")

// AsError returns the *Error in err's chain, if any.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// IsNotFound reports whether err is a store not-found.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }
