package main

import (
	"context"
	"fmt"
	"io"

	"github.com/notifyd/notifyd/internal/accounts"
	"github.com/notifyd/notifyd/internal/daemon"
	"github.com/notifyd/notifyd/internal/secret"
)

// withStore runs fn on the migrated store and secret box of the serve
// configuration in args, for the commands that work on the database.
func withStore(ctx context.Context, args []string, stderr io.Writer, fn func(*daemon.Daemon, *secret.Box) error) error {
	cfg, err := loadConfig(args, stderr)
	if err != nil {
		return err
	}
	d := daemon.New(cfg, newLogger(cfg, stderr), nil)
	defer d.Close(context.Background())
	box, err := d.OpenStore(ctx, true)
	if err != nil {
		return err
	}
	return fn(d, box)
}

// rekey re-seals every stored secret under NOTIFYD_SECRET_KEY, reading the
// ones sealed before a key change with NOTIFYD_SECRET_KEY_PREVIOUS (README,
// "Changing the secret key").
func rekey(ctx context.Context, args []string, stderr io.Writer) error {
	return withStore(ctx, args, stderr, func(d *daemon.Daemon, box *secret.Box) error {
		n, err := accounts.New(accounts.Options{Store: d.DB, Box: box}).Rekey(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "notifyd: %d stored secrets re-sealed under key %s; NOTIFYD_SECRET_KEY_PREVIOUS is no longer needed\n", n, box.PrimaryKeyID())
		return nil
	})
}
