package kinds

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
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

// TestRequiredBeforeNew: every kind's entry decodes configJson into the
// kind's typed Config and refuses a missing required key, with the same
// invalid_request error, before the adapter looks at anything else (the
// malformed base_url here is never reached).
func TestRequiredBeforeNew(t *testing.T) {
	t.Parallel()
	for id, k := range All() {
		require.NotEmpty(t, k.Required, id)
		_, err := k.New(provider.Config{"base_url": "::"}, provider.Deps{})
		var pe *provider.Error
		require.True(t, errors.As(err, &pe), id)
		require.Equal(t, notify.FailureInvalidRequest, pe.Code, id)
		require.Equal(t, "missing required config key "+k.Required[0], pe.Message, id)
	}
}
