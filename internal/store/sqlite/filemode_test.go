package sqlite_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/store/sqlite"
	"github.com/notifyd/notifyd/internal/store/sqlstore"
	"github.com/notifyd/notifyd/internal/store/testdb"
)

// TestPrivateFiles (issue 17, finding 11): in a data directory others can
// read, with a umask that lets new files be read by everyone, the
// database and its -wal and -shm files are 0600; a database file made
// readable by others before is tightened. Not parallel: the umask is the
// process's.
func TestPrivateFiles(t *testing.T) {
	dir := testdb.TempDir(t) // removed with retries: a late -wal or -shm made t.TempDir's one try fail in CI
	require.NoError(t, os.Chmod(dir, 0o755))
	old := syscall.Umask(0)
	defer syscall.Umask(old)

	path := filepath.Join(dir, "notifyd.db")
	b, err := sqlite.Open(path, sqlite.Options{Synchronous: "NORMAL"})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, sqlstore.New(b).Migrate(ctx)) // writes: the -wal and -shm files exist now
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		st, err := os.Stat(p)
		require.NoError(t, err, p)
		require.Equal(t, fs.FileMode(0o600), st.Mode().Perm(), p)
	}
	require.NoError(t, b.Close())

	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if _, err := os.Stat(p); err == nil {
			require.NoError(t, os.Chmod(p, 0o644))
		}
	}
	b, err = sqlite.Open(path, sqlite.Options{Synchronous: "NORMAL"})
	require.NoError(t, err)
	require.NoError(t, sqlstore.New(b).Ping(ctx))
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if st, err := os.Stat(p); err == nil {
			require.Equal(t, fs.FileMode(0o600), st.Mode().Perm(), p)
		}
	}
	require.NoError(t, b.Close())
}
