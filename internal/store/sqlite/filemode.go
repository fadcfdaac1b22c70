package sqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// privateFiles makes the database file at path, and its -wal and -shm
// files when they exist, readable by their owner only (0600), whatever the
// umask and the data directory's mode: they hold phone numbers, addresses
// and message bodies. A missing database file is created 0600 before
// SQLite opens it, because SQLite creates a new file 0644 and gives the
// -wal and -shm files it makes later the database file's mode; those made
// by an earlier version are tightened here too.
func privateFiles(path string) error {
	if path == ":memory:" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case err == nil:
		if err := f.Close(); err != nil {
			return fmt.Errorf("create database file: %w", err)
		}
	case !errors.Is(err, fs.ErrExist):
		return fmt.Errorf("create database file: %w", err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		st, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if st.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(p, st.Mode().Perm()&0o700); err != nil {
				return fmt.Errorf("restrict %s to its owner: %w", p, err)
			}
		}
	}
	return nil
}
