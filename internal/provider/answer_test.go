package provider

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
)

func TestFlexString(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]FlexString{`"2000"`: "2000", `2000`: "2000", ` 12.5 `: "12.5", `null`: "", `""`: ""} {
		var f FlexString
		require.NoError(t, json.Unmarshal([]byte(in), &f), in)
		require.Equal(t, want, f, in)
	}
	var f FlexString
	require.Error(t, json.Unmarshal([]byte(`"unterminated`), &f))
}

func TestSnippetAndUnlistedStatus(t *testing.T) {
	t.Parallel()
	require.Equal(t, "oops", Snippet([]byte("  oops\n"), 300))
	require.Equal(t, "abc", Snippet([]byte(" abcdef"), 3))
	require.Equal(t, notify.FailureInvalidRequest, UnlistedStatus(404))
	require.Equal(t, notify.FailureUnknown, UnlistedStatus(200))
	require.Equal(t, notify.FailureUnknown, UnlistedStatus(500))
}

func TestAnswered(t *testing.T) {
	t.Parallel()
	perr := Errorf(notify.FailureTemporaryUnavailable, "timeout")
	_, failure, done := Answered(Exchange{}, perr)
	require.True(t, done)
	require.Same(t, perr, failure)

	status, failure, done := Answered(Exchange{Response: &Response{HTTPStatus: 202}}, nil)
	require.True(t, done)
	require.Nil(t, failure)
	require.Equal(t, 202, status)

	status, _, done = Answered(Exchange{Response: &Response{HTTPStatus: 422}}, nil)
	require.False(t, done)
	require.Equal(t, 422, status)
}
