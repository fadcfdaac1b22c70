package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/secret"
)

// keyFile is the key file beside a SQLite database that secretKey uses
// (and creates on first start), or "" when NOTIFYD_SECRET_KEY is set or
// the database is PostgreSQL.
func (d *Daemon) keyFile() string {
	if d.Config.SecretKey != "" || d.Config.IsPostgres() {
		return ""
	}
	path := strings.TrimPrefix(strings.TrimPrefix(d.Config.DatabaseURL, "sqlite:"), "//")
	return filepath.Join(filepath.Dir(path), keyFileName)
}

// keyFileMissing reports whether secretKey is about to create the key file.
func (d *Daemon) keyFileMissing() bool {
	f := d.keyFile()
	if f == "" {
		return false
	}
	_, err := os.Stat(f)
	return os.IsNotExist(err)
}

// openBox builds the secret box of key, reading also with the former keys
// of NOTIFYD_SECRET_KEY_PREVIOUS, and refuses a database whose stored
// secrets were sealed with a key it does not hold: served anyway, every
// signed request would fail with 500 (a database moved without its key
// file got a new key and looked ready). created says the key file was
// just generated: it is removed again, so the right one can be put back.
func (d *Daemon) openBox(ctx context.Context, key []byte, created bool) (*secret.Box, error) {
	older := make([][]byte, len(d.Config.SecretKeyPrevious))
	for i, k := range d.Config.SecretKeyPrevious {
		var err error
		if older[i], err = secret.ParseKey(k); err != nil {
			return nil, fmt.Errorf("NOTIFYD_SECRET_KEY_PREVIOUS key %d: %w", i+1, err)
		}
	}
	box, err := secret.NewBox(key, older...)
	if err != nil {
		return nil, err
	}
	var ids []string
	if err := d.DB.View(ctx, func(tx notify.Tx) error {
		ids, err = tx.SealedKeyIDs(ctx)
		return err
	}); err != nil {
		return nil, fmt.Errorf("check stored secrets: %w", err)
	}
	var unknown []string
	for _, id := range ids {
		if !box.HasKey(id) {
			unknown = append(unknown, id)
		}
	}
	if len(unknown) == 0 {
		d.warnKeyFileMode()
		return box, nil
	}
	source := "NOTIFYD_SECRET_KEY"
	if f := d.keyFile(); f != "" {
		source = "the key file " + f
		if created {
			_ = os.Remove(f)
			source = "a key file generated now, as " + f + " was missing (removed again)"
		}
	}
	return nil, fmt.Errorf(`stored secrets are sealed with key %s, which is not configured: the key in use (id %s) is %s.
The database was probably moved or restored without its key: put its %s back beside the database file, or set NOTIFYD_SECRET_KEY to the key it was used with.
After changing the key on purpose, give the former key in NOTIFYD_SECRET_KEY_PREVIOUS and run "notifyd rekey"`,
		strings.Join(unknown, ", "), box.PrimaryKeyID(), source, keyFileName)
}

// warnKeyFileMode warns when the key file can be read by other users than
// its owner (it is created 0600; a copy may not be).
func (d *Daemon) warnKeyFileMode() {
	f := d.keyFile()
	if f == "" {
		return
	}
	if st, err := os.Stat(f); err == nil && st.Mode().Perm()&0o077 != 0 {
		d.Logger.Warn("the secret key file is readable by other users; restrict it with chmod 600",
			"path", f, "mode", fmt.Sprintf("%#o", st.Mode().Perm()))
	}
}
