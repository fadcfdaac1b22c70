package newsletter

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
)

func TestParseAudience(t *testing.T) {
	for _, tc := range []struct {
		raw   string
		conds map[string]string
		never bool
		nilA  bool
		bad   bool
	}{
		{raw: "", nilA: true},
		{raw: `{}`, nilA: true},
		{raw: `{"segment":"x"}`, nilA: true},
		{raw: `{"attributes":{"plan":"pro","age":30,"ratio":1.50,"vip":true,"off":false,"big":1e3,"neg":-2}}`,
			conds: map[string]string{"plan": "pro", "age": "30", "ratio": "1.5", "vip": "true", "off": "false", "big": "1000", "neg": "-2"}},
		{raw: `{"attributes":{"이름":"김"}}`, conds: map[string]string{"이름": "김"}},
		{raw: `{"attributes":{"a":"x","b":null}}`, conds: map[string]string{"a": "x"}, never: true},
		{raw: `{"attributes":{}}`, bad: true},
		{raw: `{"attributes":[]}`, bad: true},
		{raw: `{"attributes":["a"]}`, bad: true},
		{raw: `{"attributes":null}`, bad: true},
		{raw: `{"attributes":"a"}`, bad: true},
		{raw: `{"attributes":{"a":null,"b":[],"c":{}}}`, bad: true},
	} {
		a, err := ParseAudience(tc.raw)
		if tc.bad {
			e, ok := notify.AsError(err)
			require.True(t, ok, tc.raw)
			require.Equal(t, "audienceFilter.attributes must contain at least one string/number/boolean value", e.Detail)
			continue
		}
		require.NoError(t, err, tc.raw)
		if tc.nilA {
			require.Nil(t, a, tc.raw)
			require.True(t, a.Match(map[string]string{}))
			continue
		}
		require.Equal(t, tc.conds, a.Conds, tc.raw)
		require.Equal(t, tc.never, a.Never, tc.raw)
	}
	a, _ := ParseAudience(`{"attributes":{"age":30,"vip":true}}`)
	require.True(t, a.Match(map[string]string{"age": "30", "vip": "true", "x": "y"}))
	require.False(t, a.Match(map[string]string{"age": "30"}))
	require.False(t, a.Match(map[string]string{"age": "31", "vip": "true"}))
}

func TestAdSubject(t *testing.T) {
	require.Equal(t, "(광고) Sale", AdSubject("Sale", true))
	require.Equal(t, "(광고) Sale", AdSubject("(광고) Sale", true))
	require.Equal(t, "(광고)Sale", AdSubject("(광고)Sale", true))
	require.Equal(t, "Sale", AdSubject("Sale", false))
}

func TestCampaignRequest(t *testing.T) {
	now := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	c := &notify.Campaign{ID: "c1", WorkspaceID: "w", Channel: notify.ChannelEmail, Subject: "{{이름}}님", ContentText: "Hi {{이름}} {{none}}",
		ContentHTML: "<BODY>Hi {{이름}}</BODY>", IsAdvertisement: true, IncludeUnsubscribe: false, LinkBase: "https://n.test"}
	x := &notify.Subscriber{ID: "s1", Address: "a@example.com", Name: "A", UnsubscribeToken: "tok_-1",
		Attributes: map[string]string{"이름": "<김>"}}
	r, err := campaignRequest(c, x, now)
	require.NoError(t, err)
	require.Equal(t, "(광고) <김>님", r.Title)
	require.True(t, strings.HasPrefix(r.Text, "Hi <김> \n\n--\n"), r.Text)
	require.Contains(t, r.Text, "https://n.test/v1/newsletter/unsubscribe?token=tok_-1")
	require.True(t, strings.HasPrefix(r.HTML, "<BODY>Hi &lt;김&gt;<hr>"), "escaped value, footer inside the body: %s", r.HTML)
	require.True(t, strings.HasSuffix(r.HTML, "</BODY>"))
	require.Equal(t, "<https://n.test/v1/newsletter/unsubscribe/one-click?token=tok_-1>", r.Headers["List-Unsubscribe"])
	require.Equal(t, "List-Unsubscribe=One-Click", r.Headers["List-Unsubscribe-Post"])
	require.Equal(t, map[string]string{"campaignId": "c1", "subscriberId": "s1"}, r.Metadata)
	require.Equal(t, notify.SourceCampaign, r.Source)
	require.Equal(t, "c1", r.CampaignID)

	c.IsAdvertisement, c.ContentHTML = false, ""
	r, err = campaignRequest(c, x, now)
	require.NoError(t, err)
	require.Equal(t, "<김>님", r.Title)
	require.Equal(t, "Hi <김> ", r.Text, "no footer when not an advertisement and includeUnsubscribe is false")
	require.Empty(t, r.HTML)
	require.NotEmpty(t, r.Headers["List-Unsubscribe"])

	x.Address = "not-an-address"
	r, err = campaignRequest(c, x, now)
	require.NoError(t, err)
	require.Nil(t, r)
}
