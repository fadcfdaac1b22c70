package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
)

// Backup writes a consistent copy of the database file at path to dest
// with VACUUM INTO while a running notifyd keeps reading and writing it:
// the copy is one read transaction's snapshot (in WAL mode a reader never
// blocks the writer), compacted, with no WAL beside it. The copy is
// written to dest.tmp and renamed, so dest is either whole or absent; it
// gets mode 0600 like the database. dest must not exist.
func Backup(ctx context.Context, path, dest string) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("database: %w", err)
	}
	if _, err := os.Stat(dest); err == nil {
		return fmt.Errorf("%s already exists", dest)
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	tmp := dest + ".tmp"
	_ = os.Remove(tmp) // a leftover of an interrupted backup
	q := url.Values{}
	q.Set("mode", "rw") // never create an empty database at a wrong path
	q.Add("_pragma", "busy_timeout(10000)")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, tmp); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("vacuum into %s: %w", tmp, err)
	}
	if err := syncFile(tmp); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, dest)
}

// syncFile restricts the copy to its owner and flushes it to disk before
// the rename makes it the backup.
func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Chmod(0o600); err != nil {
		return err
	}
	return f.Sync()
}
