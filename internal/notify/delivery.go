package notify

import "context"

// DirectSend is a send whose caller waits for the outcome (an OTP, a
// provider test-send): no job retry, no wait in an adapter batch or on a
// dispatch limit. The request and its job row are stored already.
type DirectSend struct {
	Request *Request
	Job     *Job
	// Account, when set, is the only provider tried (a test-send), with
	// the circuit breaker bypassed; else the request's routes are.
	Account *ProviderAccount
	// Secrets are plaintexts (an OTP code or link) kept out of everything
	// recorded: attempts, provider exchanges, error messages.
	Secrets []string
}

// DirectOutcome is what a DirectSend came to. Record writes it (attempts,
// circuit states, the request's final state and its event) in the
// caller's transaction.
type DirectOutcome interface {
	Succeeded() bool
	// Failure is the final failure code and message (secrets redacted).
	Failure() (FailureCode, string)
	Record(ctx context.Context, tx Tx) error
}
