package usecase

import (
	"errors"
	"fmt"

	"github.com/notifyd/notifyd/internal/notify"
)

// NotFound maps a store not-found onto the API's 404 naming what.
func NotFound(err error, what string) error {
	if errors.Is(err, notify.ErrNotFound) {
		return notify.NotFound(what)
	}
	return err
}

// ConflictOr maps a store conflict onto a 409 with the detail given.
func ConflictOr(err error, format string, args ...any) error {
	if errors.Is(err, notify.ErrConflict) {
		return notify.Conflict(format, args...)
	}
	return err
}

// Wrap adds context to an internal error; a coded error (a 4xx) goes
// through unchanged.
func Wrap(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	if _, ok := notify.AsError(err); ok {
		return err
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}
