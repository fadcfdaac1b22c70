package daemon

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	"github.com/notifyd/notifyd/internal/config"
	"github.com/notifyd/notifyd/internal/store/sqlite"
)

// ErrBackupPostgres answers a backup of a PostgreSQL database: its own
// tools do it better (consistent, online, parallel, and restorable into
// another server version).
var ErrBackupPostgres = errors.New(`backup copies the embedded SQLite database; with PostgreSQL use pg_dump, e.g.
  pg_dump --format=custom --file=notifyd.dump "$NOTIFYD_DATABASE_URL"
and restore with
  pg_restore --clean --if-exists --no-owner --dbname="$NOTIFYD_DATABASE_URL" notifyd.dump
(keep NOTIFYD_SECRET_KEY with it: the stored provider configs and secrets are encrypted with it)`)

// Backup writes an online, consistent copy of cfg's SQLite database to
// dest (see sqlite.Backup); a running service keeps serving meanwhile. It
// returns the key file that must go with the copy, or "" when the key is
// NOTIFYD_SECRET_KEY.
func Backup(ctx context.Context, cfg config.Config, dest string) (keyFile string, err error) {
	if cfg.IsPostgres() {
		return "", ErrBackupPostgres
	}
	path := strings.TrimPrefix(strings.TrimPrefix(cfg.DatabaseURL, "sqlite:"), "//")
	if err := sqlite.Backup(ctx, path, dest); err != nil {
		return "", err
	}
	if cfg.SecretKey != "" {
		return "", nil
	}
	return filepath.Join(filepath.Dir(path), keyFileName), nil
}

// keyFileName is the key file beside a SQLite database (secretKey).
const keyFileName = "notifyd.key"
