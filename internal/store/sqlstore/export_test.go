package sqlstore

import (
	"context"

	"github.com/notifyd/notifyd/internal/store/migrate"
)

// MigrateWith runs the migration executor on ms instead of the embedded
// migrations (tests of a failing or a later migration).
func (s *Store) MigrateWith(ctx context.Context, ms []migrate.Migration) error {
	return migrate.Up(ctx, migrator{s}, ms)
}
