package sqlstore

import (
	"embed"

	"github.com/notifyd/notifyd/internal/store/migrate"
)

// The schema is written once, like the queries: both dialects apply the
// same numbered files, except NNN_name.postgres.sql and NNN_name.sqlite.sql,
// which only their dialect applies (under the same version).
//
//go:embed migrations/*.sql
var migrationFS embed.FS

// Migrations returns the service's migrations for dialect (postgres or
// sqlite) in version order.
func Migrations(dialect string) ([]migrate.Migration, error) {
	return migrate.LoadDir(migrationFS, "migrations", dialect)
}
