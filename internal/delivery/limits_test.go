package delivery

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/delivery/pacing"
	"github.com/notifyd/notifyd/internal/notify"
)

func TestApplicableLimits(t *testing.T) {
	t.Parallel()
	list := []*notify.DispatchLimit{
		{Scope: notify.DispatchScopeWorkspace, RatePerSecond: 100, Enabled: true},
		{Scope: notify.DispatchScopeProvider, TargetID: "p1", RatePerSecond: 10, Enabled: true},
		{Scope: notify.DispatchScopeProvider, TargetID: "p2", RatePerSecond: 20, Enabled: true},
		{Scope: notify.DispatchScopeAPIKey, TargetID: "k1", RatePerSecond: 5, Enabled: true},
		{Scope: notify.DispatchScopeAPIKey, TargetID: "k2", RatePerSecond: 1, Enabled: false},
	}
	api := &notify.Request{WorkspaceID: "w", APIKeyID: "k1", Source: notify.SourceAPI}
	require.Equal(t, []pacing.Limit{{Key: "workspace:w", Rate: 100}, {Key: "provider:w:p1", Rate: 10}, {Key: "apiKey:w:k1", Rate: 5}},
		applicableLimits(list, api, "p1"))
	require.Equal(t, []pacing.Limit{{Key: "workspace:w", Rate: 100}, {Key: "provider:w:p2", Rate: 20}, {Key: "apiKey:w:k1", Rate: 5}},
		applicableLimits(list, api, "p2"))
	// A disabled limit is ignored; a request without a key (campaign) has
	// no key scope.
	k2 := &notify.Request{WorkspaceID: "w", APIKeyID: "k2"}
	require.Equal(t, []pacing.Limit{{Key: "workspace:w", Rate: 100}}, applicableLimits(list, k2, "p3"))
	campaign := &notify.Request{WorkspaceID: "w", Source: notify.SourceCampaign}
	require.Equal(t, []pacing.Limit{{Key: "workspace:w", Rate: 100}}, applicableLimits(list, campaign, ""))
	require.Empty(t, applicableLimits(nil, api, "p1"))
}
