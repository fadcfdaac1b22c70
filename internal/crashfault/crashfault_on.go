//go:build crashfault

package crashfault

import (
	"fmt"
	"os"
	"strings"
	"sync"
)

// Env holds the faults, comma-separated "point=substring" pairs: a Hit
// at point whose subject contains substring kills the process with
// SIGKILL. Points: "job" (subject: the queue job's kind, worker.CrashGuard)
// and "text" (subject: a request's text when a dispatch run claimed it).
const Env = "NOTIFYD_CRASH_FAULT"

var faults = sync.OnceValue(func() map[string]string {
	out := map[string]string{}
	for _, f := range strings.Split(os.Getenv(Env), ",") {
		if point, sub, ok := strings.Cut(f, "="); ok && sub != "" {
			out[point] = sub
		}
	}
	return out
})

// Hit kills the process when a fault is set for point and subject
// contains its substring.
func Hit(point, subject string) {
	sub, ok := faults()[point]
	if !ok || !strings.Contains(subject, sub) {
		return
	}
	fmt.Fprintf(os.Stderr, "crashfault: killing the process at %s %q\n", point, subject)
	p, err := os.FindProcess(os.Getpid())
	if err == nil {
		_ = p.Kill()
	}
	select {} // the signal is on its way
}
