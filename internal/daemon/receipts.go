package daemon

import (
	"context"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/receipts"
	"github.com/notifyd/notifyd/internal/sends"
)

// reportCommitter is the receipts room's Committer on dialect. On SQLite
// (one writer) a vendor callback's report is written in the send group
// commit's transaction (a call with no send of its own), so under a send
// load reports take no turns of their own at the writer. PostgreSQL runs
// writers side by side: there reports keep their own group commit (nil,
// the room's default), which does not wait behind the sends' batches
// (docs/DECISIONS.md "Reports ride in the send group commit").
func reportCommitter(dialect string, s *sends.Service) receipts.Committer {
	if dialect != "sqlite" {
		return nil
	}
	return receiptCommitter{s}
}

type receiptCommitter struct{ s *sends.Service }

func (r receiptCommitter) CommitShared(ctx context.Context, fn func(tx notify.Tx) error) error {
	return r.s.CommitWith(ctx, "", nil, nil, nil, func(_ context.Context, tx notify.Tx, _, _ []string) ([]bool, error) {
		return nil, fn(tx)
	})
}
