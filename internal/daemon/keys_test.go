package daemon_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/accounts"
	"github.com/notifyd/notifyd/internal/config"
	"github.com/notifyd/notifyd/internal/daemon"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/secret"
)

const (
	keyA = "000000000000000000000000000000000000000000000000000000000000000a"
	keyB = "000000000000000000000000000000000000000000000000000000000000000b"
)

func keyID(t *testing.T, hexKey string) string {
	k, err := secret.ParseKey(hexKey)
	require.NoError(t, err)
	return secret.KeyID(k)
}

// openStore runs OpenStore with a logger into log; the daemon is closed
// after the test.
func openStore(t *testing.T, cfg config.Config, log *bytes.Buffer) (*daemon.Daemon, *secret.Box, error) {
	t.Helper()
	if log == nil {
		log = &bytes.Buffer{}
	}
	d := daemon.New(cfg, slog.New(slog.NewTextHandler(log, nil)), nil)
	t.Cleanup(func() { _ = d.Close(context.Background()) })
	box, err := d.OpenStore(context.Background(), true)
	return d, box, err
}

// storeProvider stores a provider account whose configJson is sealed by
// box, as the service does, and returns its id.
func storeProvider(t *testing.T, d *daemon.Daemon, box *secret.Box) string {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	ws, id := uuid.Must(uuid.NewV7()).String(), uuid.Must(uuid.NewV7()).String()
	enc, err := box.SealFor("provider:"+id, []byte(`{"mailx_api_key":"k"}`))
	require.NoError(t, err)
	require.NoError(t, d.DB.Update(ctx, func(tx notify.Tx) error {
		if err := tx.CreateWorkspace(ctx, &notify.Workspace{ID: ws, Name: "w", CreatedAt: now, UpdatedAt: now}); err != nil {
			return err
		}
		return tx.CreateProviderAccount(ctx, &notify.ProviderAccount{ID: id, WorkspaceID: ws, ProviderKind: "mailx_email",
			Channel: notify.ChannelEmail, DisplayName: "p", Enabled: true, ConfigEnc: enc, CreatedAt: now, UpdatedAt: now})
	}))
	return id
}

func sealedConfig(t *testing.T, d *daemon.Daemon, id string) string {
	t.Helper()
	ctx := context.Background()
	var enc string
	require.NoError(t, d.DB.View(ctx, func(tx notify.Tx) error {
		p, err := tx.FindProviderAccountAnyWorkspace(ctx, id)
		if err == nil {
			enc = p.ConfigEnc
		}
		return err
	}))
	return enc
}

// TestKeyMismatchRefused (issue 17, finding 5): a database whose stored
// secrets were sealed with a key that is not configured is refused at
// start with a message saying what to do, instead of being served with
// every signed request failing; NOTIFYD_SECRET_KEY_PREVIOUS reads the old
// key and rekey moves everything to the new one.
func TestKeyMismatchRefused(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.DatabaseURL = notifytest.DatabaseURL(t)
	cfg.SQLiteSynchronous = "NORMAL"
	cfg.SecretKey = keyA
	d, boxA, err := openStore(t, cfg, nil)
	require.NoError(t, err)
	id := storeProvider(t, d, boxA)
	require.NoError(t, d.Close(context.Background()))

	cfg.SecretKey = keyB
	_, _, err = openStore(t, cfg, nil)
	require.ErrorContains(t, err, "stored secrets are sealed with key "+keyID(t, keyA)+", which is not configured")
	require.ErrorContains(t, err, "NOTIFYD_SECRET_KEY_PREVIOUS")

	// Rotation: the former key reads, rekey re-seals under the new one.
	cfg.SecretKeyPrevious = []string{keyA}
	d, box, err := openStore(t, cfg, nil)
	require.NoError(t, err)
	n, err := accounts.New(accounts.Options{Store: d.DB, Box: box}).Rekey(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, n)
	enc := sealedConfig(t, d, id)
	require.True(t, strings.HasPrefix(enc, "v1."+keyID(t, keyB)+"."), enc)
	k, _ := secret.ParseKey(keyB)
	boxB, _ := secret.NewBox(k)
	plain, err := boxB.OpenFor("provider:"+id, enc)
	require.NoError(t, err, "the new key alone opens it, bound to its row as before")
	require.JSONEq(t, `{"mailx_api_key":"k"}`, string(plain))
	n, err = accounts.New(accounts.Options{Store: d.DB, Box: box}).Rekey(context.Background())
	require.NoError(t, err)
	require.Zero(t, n, "nothing left to re-seal")
	require.NoError(t, d.Close(context.Background()))

	cfg.SecretKeyPrevious = nil
	_, _, err = openStore(t, cfg, nil)
	require.NoError(t, err, "the new key alone is enough after rekey")
	cfg.SecretKey = keyA
	_, _, err = openStore(t, cfg, nil)
	require.ErrorContains(t, err, "sealed with key "+keyID(t, keyB))
}

// TestKeyFileMissing (issue 17, findings 5 and 11): an embedded database
// copied without notifyd.key is refused and no new key file is left
// behind; with its key file back it opens, with a warning when the key
// file is readable by others.
func TestKeyFileMissing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := config.Default()
	cfg.DatabaseURL = "sqlite:" + filepath.Join(dir, "notifyd.db")
	cfg.SQLiteSynchronous = "NORMAL"
	keyFile := filepath.Join(dir, "notifyd.key")

	// A fresh database gets a key file, and a fresh key file is quiet.
	var log bytes.Buffer
	d, box, err := openStore(t, cfg, &log)
	require.NoError(t, err)
	storeProvider(t, d, box)
	require.NoError(t, d.Close(context.Background()))
	require.NotContains(t, log.String(), "readable by other users")
	key, err := os.ReadFile(keyFile)
	require.NoError(t, err)

	require.NoError(t, os.Remove(keyFile))
	_, _, err = openStore(t, cfg, nil)
	require.ErrorContains(t, err, "stored secrets are sealed with key")
	require.ErrorContains(t, err, keyFile+" was missing (removed again)")
	require.NoFileExists(t, keyFile, "no new key is left to be taken for the right one")

	require.NoError(t, os.WriteFile(keyFile, key, 0o644))
	require.NoError(t, os.Chmod(keyFile, 0o644)) // whatever the umask
	log.Reset()
	_, _, err = openStore(t, cfg, &log)
	require.NoError(t, err)
	require.Contains(t, log.String(), "the secret key file is readable by other users")
	require.Contains(t, log.String(), keyFile)
}
