package sqlstore

import (
	"embed"

	"github.com/notifyd/notifyd/internal/store/migrate"
)

// The schema is written once, like the queries: both dialects apply the
// same numbered files. A future migration that needs dialect-specific SQL
// belongs in that dialect's package.
//
//go:embed migrations/*.sql
var migrationFS embed.FS

// Migrations returns the service's migrations in version order.
func Migrations() ([]migrate.Migration, error) { return migrate.LoadDir(migrationFS, "migrations") }
