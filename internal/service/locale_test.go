package service

import (
	"testing"
	"time"

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
	require.Nil(t, localeLookup(""))
	require.Equal(t, []string{"ko"}, localeLookup("ko"))
	require.Equal(t, []string{"zh-Hant-TW", "zh-Hant", "zh"}, localeLookup("zh-Hant-TW"))
}

func TestPublishedVersion(t *testing.T) {
	t.Parallel()
	now := time.Now()
	v := func(n int, locale string, published bool) *notify.TemplateVersion {
		out := &notify.TemplateVersion{Version: n, Locale: locale, Text: locale}
		if published {
			out.PublishedAt = &now
		}
		return out
	}
	// Newest first, as the store lists them.
	vs := []*notify.TemplateVersion{v(6, "ja", false), v(5, "ko", true), v(4, "", false), v(3, "ko-KR", true), v(2, "ko", true), v(1, "", true)}
	tp := &notify.Template{Code: "c", LatestPublishedVersion: 1}
	for locale, want := range map[string]int{"": 1, "ko": 5, "ko-KR": 3, "ko-KP": 5, "ja": 1, "fr": 1} {
		got, err := publishedVersion(tp, vs, locale)
		require.NoError(t, err, locale)
		require.Equal(t, want, got.Version, locale)
	}
	tp.LatestPublishedVersion = 0
	_, err := publishedVersion(tp, vs, "")
	require.ErrorContains(t, err, ": Template c has no published version")
	_, err = publishedVersion(tp, vs, "fr")
	require.ErrorContains(t, err, "no published version for locale fr or its default locale")
	got, err := publishedVersion(tp, vs, "ko")
	require.NoError(t, err)
	require.Equal(t, 5, got.Version)
}
