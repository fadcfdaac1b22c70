package kinds

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
)

// TestSpecTable pins each kind's channel to SPEC's provider table.
func TestSpecTable(t *testing.T) {
	t.Parallel()
	want := map[string]notify.Channel{
		"vendora_msgr": notify.ChannelAlimTalk, "vendorb_msgr": notify.ChannelAlimTalk,
		"vendora_sms": notify.ChannelSMS, "vendorb_sms": notify.ChannelSMS,
		"push_gateway": notify.ChannelPush, "mailx_email": notify.ChannelEmail,
		"maily_email": notify.ChannelEmail, "mailz_email": notify.ChannelEmail,
		"chata_webhook": notify.ChannelChatAWebhook, "chata_bot": notify.ChannelChatABot,
		"chatb_webhook": notify.ChannelChatBWebhook, "chatb_bot": notify.ChannelChatBBot,
	}
	r := All()
	require.Len(t, r, len(want))
	for id, ch := range want {
		k, ok := r[id]
		require.True(t, ok, id)
		require.Equal(t, ch, k.Channel, id)
		require.NotNil(t, k.New, id)
	}
}
