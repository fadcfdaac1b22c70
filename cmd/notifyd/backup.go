package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/notifyd/notifyd/internal/config"
	"github.com/notifyd/notifyd/internal/daemon"
)

// backup runs `notifyd backup [flags] FILE`: an online copy of the SQLite
// database named by the serve configuration (flags or environment).
func backup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, rest, err := config.Load(args, nil, nil)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stderr, "Usage: notifyd backup [serve flags] FILE\n\nWrites a consistent copy of the SQLite database to FILE while the service runs.\n")
		return err
	}
	// The hint wins over the checks of serve settings a backup needs not
	// (PostgreSQL's NOTIFYD_SECRET_KEY).
	if cfg.IsPostgres() {
		return daemon.ErrBackupPostgres
	}
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return errors.New("backup needs one argument, the file to write: notifyd backup FILE")
	}
	keyFile, err := daemon.Backup(ctx, cfg, rest[0])
	if err != nil {
		return err
	}
	info, err := os.Stat(rest[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "notifyd: backup written to %s (%d bytes)\n", rest[0], info.Size())
	if keyFile != "" {
		fmt.Fprintf(stdout, "notifyd: keep %s with it (a restore needs it beside the database file, or its value as NOTIFYD_SECRET_KEY)\n", keyFile)
	} else {
		fmt.Fprintln(stdout, "notifyd: keep NOTIFYD_SECRET_KEY with it: a restore needs the same key")
	}
	return nil
}
