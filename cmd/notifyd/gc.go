package main

import (
	"os"
	"runtime/debug"

	"github.com/notifyd/notifyd/internal/gctune"
)

// Garbage-collector defaults for serve, applied only where the operator
// set neither GOGC nor GOMEMLIMIT (the Go runtime reads those itself).
// The service's live heap is small (tens of MB) and its garbage is
// per-request, so the runtime's default of collecting at twice the live
// heap spent a tenth of the CPU of a loaded serve in the collector;
// collecting at three times it costs about 12% less server CPU per
// accepted message (docs/BENCHMARKS.md, issue 15 step 10). The soft
// limit keeps a large fan-out's heap from tripling all the same; it
// follows the live heap when that passes half of it (gctune), so a
// heap that outgrows it is collected at twice its size, not back to back.
const (
	defaultGCPercent   = 200
	defaultMemoryLimit = 96 << 20
)

func tuneGC() {
	if _, ok := os.LookupEnv("GOGC"); !ok {
		debug.SetGCPercent(defaultGCPercent)
	}
	if _, ok := os.LookupEnv("GOMEMLIMIT"); !ok {
		go gctune.Follow(defaultMemoryLimit)
	}
}
