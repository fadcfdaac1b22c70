package provider

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
)

type testConfig struct {
	Key      string `json:"test_key"`
	Fallback string `json:"test_fallback"`
	Token    string `json:"test_token"`
	Endpoint
}

type testProvider struct {
	c    testConfig
	deps Deps
}

func (testProvider) Send(context.Context, []Message) []Result { return nil }

func testSpec() Spec[testConfig] {
	return Spec[testConfig]{
		ID:       "test_kind",
		Channel:  notify.ChannelSMS,
		Required: []string{"test_key"},
		Optional: []string{"test_fallback"},
		Defaults: func(c *testConfig) {
			if c.Key == "" {
				c.Key = c.Fallback
			}
		},
		New: func(c testConfig, deps Deps) (Provider, error) {
			return testProvider{c: c, deps: deps}, nil
		},
		IdentityRequired: []string{"test_token"},
		Identities: func(c testConfig, deps Deps) (notify.IdentityAPI, error) {
			return nil, nil
		},
	}
}

func requireInvalid(t *testing.T, err error, contains string) {
	t.Helper()
	var pe *Error
	require.True(t, errors.As(err, &pe), "%v", err)
	require.Equal(t, notify.FailureInvalidRequest, pe.Code)
	require.Contains(t, pe.Message, contains)
}

func TestSpecKind(t *testing.T) {
	t.Parallel()
	k := testSpec().Kind()
	require.Equal(t, "test_kind", k.ID)
	require.Equal(t, notify.ChannelSMS, k.Channel)
	require.Equal(t, []string{"test_key"}, k.Required)
	require.Equal(t, []string{"test_fallback"}, k.Optional)

	// Decoded into the typed Config, unknown keys ignored; deps filled.
	p, err := k.New(Config{"test_key": "k", "base_url": "http://127.0.0.1:1/x", "dispatch_max_batch_size": "5"}, Deps{})
	require.NoError(t, err)
	tp := p.(testProvider)
	require.Equal(t, testConfig{Key: "k", Endpoint: Endpoint{BaseURL: "http://127.0.0.1:1/x"}}, tp.c)
	require.Same(t, DefaultHTTPClient(), tp.deps.HTTP)
	require.NotNil(t, tp.deps.Now)

	// A missing or empty required key never reaches New.
	_, err = k.New(Config{"test_key": ""}, Deps{})
	requireInvalid(t, err, "missing required config key test_key")

	// Defaults run before the check.
	p, err = k.New(Config{"test_fallback": "f"}, Deps{})
	require.NoError(t, err)
	require.Equal(t, "f", p.(testProvider).c.Key)
}

func TestSpecIdentities(t *testing.T) {
	t.Parallel()
	k := testSpec().Kind()
	// The identity keys are checked first, then the sending keys.
	_, err := k.Identities(Config{}, Deps{})
	requireInvalid(t, err, "test_token")
	_, err = k.Identities(Config{"test_token": "t"}, Deps{})
	requireInvalid(t, err, "test_key")
	_, err = k.Identities(Config{"test_token": "t", "test_key": "k"}, Deps{})
	require.NoError(t, err)

	s := testSpec()
	s.Identities = nil
	require.Nil(t, s.Kind().Identities)
}

func TestEndpointRoot(t *testing.T) {
	t.Parallel()
	root, err := Endpoint{}.Root("https://slack.com")
	require.Nil(t, err)
	require.Equal(t, "https://slack.com", root)

	root, err = Endpoint{BaseURL: "http://127.0.0.1:9090/ignored/path?q=1"}.Root("https://slack.com")
	require.Nil(t, err)
	require.Equal(t, "http://127.0.0.1:9090", root)

	for _, bad := range []string{"127.0.0.1:9090", "ftp://x", "http://", "::"} {
		_, err = Endpoint{BaseURL: bad}.Root("https://slack.com")
		require.NotNil(t, err, bad)
		require.Equal(t, notify.FailureInvalidRequest, err.Code)
		require.Equal(t, "base_url must be an absolute http(s) URL", err.Message)
	}
}

func TestSendChunks(t *testing.T) {
	t.Parallel()
	var calls []int
	one := func(_ context.Context, m Message) Result {
		calls = append(calls, 1)
		return Result{MessageID: "one-" + m.ID}
	}
	batch := func(_ context.Context, ms []Message) []Result {
		calls = append(calls, len(ms))
		out := make([]Result, len(ms))
		for i, m := range ms {
			out[i] = Result{MessageID: "batch-" + m.ID}
		}
		return out
	}
	require.Nil(t, SendChunks(context.Background(), nil, 2, one, batch))

	msgs := []Message{{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "d"}, {ID: "e"}}
	res := SendChunks(context.Background(), msgs, 2, one, batch)
	require.Equal(t, []int{2, 2, 1}, calls, "a lone remainder goes through one")
	ids := make([]string, len(res))
	for i, r := range res {
		ids[i] = r.MessageID
	}
	require.Equal(t, []string{"batch-a", "batch-b", "batch-c", "batch-d", "one-e"}, ids)
}

func TestSendEach(t *testing.T) {
	t.Parallel()
	res := SendEach(context.Background(), []Message{{ID: "a"}, {ID: "b"}}, func(_ context.Context, m Message) Result {
		return Result{MessageID: m.ID}
	})
	require.Equal(t, []Result{{MessageID: "a"}, {MessageID: "b"}}, res)
}

func TestMailHeadersAndJSON(t *testing.T) {
	t.Parallel()
	require.Nil(t, MailHeaders(nil))
	h := MailHeaders(map[string]string{"List-Unsubscribe-Post": "List-Unsubscribe=One-Click", "List-Unsubscribe": "<https://x.test/u>"})
	require.Equal(t, []MailHeader{{"List-Unsubscribe", "<https://x.test/u>"}, {"List-Unsubscribe-Post", "List-Unsubscribe=One-Click"}}, h)

	b, err := EncodeJSON(map[string]string{"from": "Acme <a@b.test>", "html": "<p>&</p>"})
	require.NoError(t, err)
	require.Equal(t, `{"from":"Acme <a@b.test>","html":"<p>&</p>"}`, string(b))
	_, err = EncodeJSON(make(chan int))
	require.Error(t, err)
}
