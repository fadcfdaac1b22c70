package notify

import (
	"context"
	"time"
)

// OTP session statuses (SPEC "OTP session").
const (
	OTPPending  = "pending"
	OTPVerified = "verified"
	OTPExpired  = "expired"
	OTPFailed   = "failed"
	OTPCanceled = "canceled"
)

// OTP modes.
const (
	OTPModeCode = "code"
	OTPModeLink = "link"
)

// OTP send counter windows.
const (
	OTPWindowHour = "h"
	OTPWindowDay  = "d"
)

// OTPSession is one verification session. Code and link token are kept
// only as hashes.
type OTPSession struct {
	ID                string
	WorkspaceID       string
	Channel           Channel
	Mode              string
	Purpose           string
	Recipient         string // normalized
	RecipientMasked   string
	Status            string
	CodeHash          string // "" when none
	LinkHash          string // "" when none
	Attempts          int
	ResendCount       int
	ExpiresAt         time.Time
	VerifiedAt        *time.Time
	ResendAvailableAt time.Time
	RequestID         string
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// OTPTx holds the store verbs of one-time verification (issue 6).
type OTPTx interface {
	CreateOTPSession(ctx context.Context, s *OTPSession) error
	FindOTPSession(ctx context.Context, workspaceID, id string) (*OTPSession, error)
	// FindOTPSessionByLink finds the session holding a link-token hash.
	FindOTPSessionByLink(ctx context.Context, linkHash string) (*OTPSession, error)
	// UpdateOTPSession writes every mutable field of s. When expectStatus
	// and expectResends match the stored row it returns true; otherwise
	// nothing is written and it returns false (optimistic check).
	UpdateOTPSession(ctx context.Context, s *OTPSession, expectStatus string, expectResends int) (bool, error)
	// UseOTPAttempt atomically adds one attempt to a pending code-mode
	// session that has fewer than max attempts and has not expired at now.
	// It reports whether an attempt was taken.
	UseOTPAttempt(ctx context.Context, workspaceID, id string, max int, now time.Time) (bool, error)
	// IncrementOTPSendCount adds one to a recipient's send counter of one
	// window and returns the new count.
	IncrementOTPSendCount(ctx context.Context, workspaceID, recipient, windowKind string, windowStart time.Time) (int, error)
	// DeleteOTPSessionsExpiredBefore deletes sessions (of every workspace
	// and status) whose expiry is before t, and returns how many.
	DeleteOTPSessionsExpiredBefore(ctx context.Context, t time.Time) (int, error)
	// DeleteOTPSendCountersBefore deletes hourly counters whose window
	// starts before hourStart and daily counters whose window starts before
	// dayStart, and returns how many.
	DeleteOTPSendCountersBefore(ctx context.Context, hourStart, dayStart time.Time) (int, error)
}
