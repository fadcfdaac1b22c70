package providertest

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
	"github.com/notifyd/notifyd/internal/provider/kinds"
	"github.com/notifyd/notifyd/internal/simulator"
	"github.com/notifyd/notifyd/internal/testmode"
)

// Test mode (issue 36): for every kind, the simulator's in-process
// transport delivers in the vendor's format without dialling the
// account's address, and each magic outcome's fault (testmode.FaultFor)
// gets the classification README "Test mode" documents from the kind's
// own adapter.
func TestTestModeOutcomesEveryKind(t *testing.T) {
	t.Parallel()
	for _, kind := range kinds.All().IDs() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			sim := simulator.New()
			// An address nothing listens on (TEST-NET-3): a dial would fail.
			e := &env{t: t, sim: sim, url: "http://203.0.113.7:9"}
			k := kinds.All()[kind]
			p, err := k.New(e.config(kind), provider.Deps{HTTP: &http.Client{Transport: sim.Transport()}})
			require.NoError(t, err)
			c, ok := cases[kind]
			require.True(t, ok)
			for _, tc := range []struct {
				o     testmode.Outcome
				first bool
				want  notify.FailureCode // "" is accepted
			}{
				{testmode.Delivered, true, ""},
				{testmode.TempFail, true, notify.FailureTemporaryUnavailable},
				{testmode.TempFail, false, ""},
				{testmode.PermFail, true, notify.FailureInvalidRequest},
				{testmode.Bounce, true, ""},
				{testmode.LateReport, true, ""},
			} {
				ctx := context.Background()
				if f, ok := testmode.FaultFor(kind, tc.o, tc.first); ok {
					ctx = simulator.WithFault(ctx, f.Status, f.VendorCode)
				}
				before := len(sim.Messages(kind, "", 0))
				res := p.Send(ctx, []provider.Message{c.msg(1)})
				require.Len(t, res, 1)
				if tc.want == "" {
					require.Nil(t, res[0].Err, "%s first=%v", tc.o, tc.first)
					require.Len(t, sim.Messages(kind, "", 0), before+1, "%s: recorded in the vendor's format", tc.o)
					continue
				}
				require.NotNil(t, res[0].Err, "%s", tc.o)
				require.Equal(t, tc.want, res[0].Err.Code, "%s: %s", tc.o, res[0].Err.Message)
				require.Len(t, sim.Messages(kind, "", 0), before, "%s: nothing recorded", tc.o)
			}
		})
	}
}
