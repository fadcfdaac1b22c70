package compose

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
)

func TestParseLocale(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"ko": "ko", "KO": "ko", "ko-kr": "ko-KR", "ko-KR": "ko-KR", "zh-hant-tw": "zh-Hant-TW", "es-419": "es-419",
		"sr-Latn": "sr-Latn", "de-ch-1996": "de-CH-1996", "sl-rozaj": "sl-rozaj", "fil": "fil", "en-US-posix": "en-US-posix",
	} {
		got, err := ParseLocale("locale", in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "k", "kore", "korean", "ko_KR", "ko-", "-ko", "ko--KR", "ko-K", "ko-KR-KR", "ko-Hang-Hang",
		"ko-x-private", "ko-u-ca-buddhist", "12", "ko-KR!", "ko-한국", "ko-abcdefghi", "ko-KR-abc", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"} {
		_, err := ParseLocale("items[2].locale", in)
		require.Error(t, err, in)
		e, ok := notify.AsError(err)
		require.True(t, ok, in)
		require.Contains(t, e.Detail, "items[2].locale must be a BCP 47 language tag", in)
	}
}

func TestLocaleLookup(t *testing.T) {
	t.Parallel()
	require.Nil(t, LocaleLookup(""))
	require.Equal(t, []string{"ko"}, LocaleLookup("ko"))
	require.Equal(t, []string{"zh-Hant-TW", "zh-Hant", "zh"}, LocaleLookup("zh-Hant-TW"))
}
