package daemon

import (
	"net/http"
	"time"

	"github.com/notifyd/notifyd/internal/simulator"
	"github.com/notifyd/notifyd/internal/testmode"
)

// Test mode (issue 36, item 1): every worker process runs a provider
// simulator in memory, and the delivery engine makes the vendor calls of
// test requests through its Transport, which hands each request to the
// simulator's handler in process. It never dials, so no address a
// provider account names (a vendor, or anything else) is ever reached by
// a test request.

// faultTransport passes the fault the engine chose for a call (a magic
// recipient's, testmode.WithFault) on to the simulator.
type faultTransport struct{ next http.RoundTripper }

func (t faultTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if f, ok := testmode.FaultOf(r.Context()); ok {
		r = r.WithContext(simulator.WithFault(r.Context(), f.Status, f.VendorCode))
	}
	return t.next.RoundTrip(r)
}

// testSimulatorMessages is how many messages the test-mode simulator
// keeps for tests to read.
const testSimulatorMessages = 10_000

// newTestSimulator is the process's test-mode simulator and the client
// that reaches it.
func newTestSimulator() (*simulator.Simulator, *http.Client) {
	sim := simulator.New()
	// What it received is read only by tests: a long-running process
	// keeps the newest few, not every test message's body.
	sim.SetMaxMessages(testSimulatorMessages)
	return sim, &http.Client{Transport: faultTransport{next: sim.Transport()}, Timeout: 30 * time.Second}
}
