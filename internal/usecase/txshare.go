package usecase

import (
	"context"

	"github.com/notifyd/notifyd/internal/notify"
)

// TxShare is what the calls of one group-commit transaction share: work
// each call's writes leave for after all of them, gathered by key and
// done once (a workflow trigger's runs: one multi-row insert for every
// trigger of the transaction instead of statements per trigger). The
// group commit makes one per transaction attempt, hands it to the calls'
// writes in their context, and runs Flush after the last of them.
type TxShare struct {
	vals  map[string]any
	flush []func(ctx context.Context, tx notify.Tx) error
}

type txShareKey struct{}

// WithTxShare is ctx carrying s for the writes of its transaction.
func WithTxShare(ctx context.Context, s *TxShare) context.Context {
	return context.WithValue(ctx, txShareKey{}, s)
}

// TxShareOf is the TxShare of ctx's transaction, nil when its writes
// share nothing (they then do their work at once).
func TxShareOf(ctx context.Context) *TxShare {
	s, _ := ctx.Value(txShareKey{}).(*TxShare)
	return s
}

// Shared answers the value kept under key, made by mk the first time
// with the work that Flush runs once for it.
func (s *TxShare) Shared(key string, mk func() (any, func(ctx context.Context, tx notify.Tx) error)) any {
	if v, ok := s.vals[key]; ok {
		return v
	}
	if s.vals == nil {
		s.vals = map[string]any{}
	}
	v, f := mk()
	s.vals[key] = v
	s.flush = append(s.flush, f)
	return v
}

// Flush runs the shared work, in the order it was first asked for.
func (s *TxShare) Flush(ctx context.Context, tx notify.Tx) error {
	for _, f := range s.flush {
		if err := f(ctx, tx); err != nil {
			return err
		}
	}
	return nil
}
