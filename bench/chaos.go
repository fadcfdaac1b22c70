package main

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/notifyd/notifyd/internal/e2e/chaosrun"
)

// chaos is issue 31's chaos run (item 6), the one TestChaos runs for
// 45 s, for as long as -duration (3 minutes unless given) on PostgreSQL:
// two api and two worker processes of the real binary behind a TCP
// proxy to the database, -rate signed sends a second (100 unless given)
// on -conns senders (6 unless given), a worker killed with SIGKILL and
// restarted every 30 s, the database cut for 5 s once, the first of two
// routes answering 500 for 20 s once, and a burst over a request limit.
// It prints the figures the test asserts on; it judges nothing.
func (b *bench) chaos(ctx context.Context) error {
	if b.db != "postgres" {
		return errors.New("the chaos scenario runs on PostgreSQL only (-db postgres)")
	}
	d, senders := b.duration, b.conns
	if !flagSet("duration") {
		d = 3 * time.Minute
	}
	if !flagSet("conns") {
		senders = 6
	}
	bin, err := b.buildNotifyd()
	if err != nil {
		return err
	}
	dbURL, err := b.databaseURL()
	if err != nil {
		return err
	}
	fmt.Printf("# chaos run on postgres: %d signed sends/s on %d senders for %s, GOMAXPROCS %d, %s\n", b.rate, senders, d,
		runtime.GOMAXPROCS(0), time.Now().UTC().Format(time.RFC3339))
	res, err := chaosrun.Run(ctx, chaosrun.Config{Binary: bin, DatabaseURL: dbURL, Duration: d, Rate: b.rate, Senders: senders,
		BurstLimit: 100, Settle: 2 * time.Minute, SinkLatency: 50 * time.Millisecond,
		Logf: func(format string, args ...any) { fmt.Printf(format+"\n", args...) }})
	if res != nil {
		for _, line := range res.Summary() {
			fmt.Println(line)
		}
	}
	if err != nil && res != nil {
		fmt.Printf("process output:\n%s\n", res.Logs)
	}
	return err
}
