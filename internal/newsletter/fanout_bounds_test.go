package newsletter

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
)

// The fan-out skips (and counts) a subscriber whose attributes break the
// subject, and fails for good on one rendered over a bound (issue 29).
func TestRenderBatchBounds(t *testing.T) {
	s := &Service{jobAttempts: 3}
	now := time.Now()
	c := &notify.Campaign{ID: "c", Channel: notify.ChannelEmail, Subject: "{{s}}", ContentText: "{{t}}", ContentHTML: "<p>{{h}}</p>"}
	sub := func(id string, attrs map[string]string) *notify.Subscriber {
		return &notify.Subscriber{ID: id, Address: id + "@example.com", Attributes: attrs}
	}
	accepts, recips, failed, err := fanouts{s}.renderBatch(c, []*notify.Subscriber{
		sub("a", map[string]string{"s": "ok"}), sub("b", map[string]string{"s": "x\ny"}), sub("c", map[string]string{"s": "x\u2028y"}),
	}, now)
	require.NoError(t, err)
	require.Len(t, accepts, 1)
	require.Len(t, recips, 3)
	require.Equal(t, 2, failed)
	require.Equal(t, "ok", accepts[0].Request.Title)

	_, _, _, err = fanouts{s}.renderBatch(c, []*notify.Subscriber{sub("a", nil), sub("b", map[string]string{"t": strings.Repeat("가", 100_001)})}, now)
	var perm *fanoutRenderFailure
	require.ErrorAs(t, err, &perm)
	require.True(t, perm.Permanent())
	require.Equal(t, "contentText must be at most 100000 characters after subscriber attributes are put in (subscriber b)", err.Error())
}
