package dispatch

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type route struct {
	acct string
	prio int
}

func ids(rs []route) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.acct
	}
	return out
}

func TestOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		routes    []route
		preferred []string
		want      []string
	}{
		{"empty", nil, nil, []string{}},
		{"empty with preferred", []route{}, []string{"a"}, []string{}},
		{"by priority", []route{{"c", 30}, {"a", 10}, {"b", 20}}, nil, []string{"a", "b", "c"}},
		{"ties keep input order", []route{{"x", 5}, {"y", 1}, {"z", 5}, {"w", 5}}, nil, []string{"y", "x", "z", "w"}},
		{"one preferred", []route{{"a", 1}, {"b", 2}, {"c", 3}}, []string{"c"}, []string{"c", "a", "b"}},
		{"preferred by priority not list order", []route{{"a", 1}, {"b", 2}, {"c", 3}, {"d", 4}}, []string{"d", "b"}, []string{"b", "d", "a", "c"}},
		{"all preferred", []route{{"b", 2}, {"a", 1}}, []string{"a", "b"}, []string{"a", "b"}},
		{"unknown preferred ignored", []route{{"b", 2}, {"a", 1}}, []string{"zzz"}, []string{"a", "b"}},
		{"duplicate preferred", []route{{"a", 1}, {"b", 2}}, []string{"b", "b"}, []string{"b", "a"}},
		{"preferred ties stable", []route{{"p1", 5}, {"n1", 1}, {"p2", 5}, {"n2", 1}}, []string{"p2", "p1"}, []string{"p1", "p2", "n1", "n2"}},
		{"negative and large priority", []route{{"a", 9999}, {"b", -1}, {"c", 0}}, nil, []string{"b", "c", "a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := slices.Clone(tc.routes)
			got := Order(in, func(r route) string { return r.acct }, func(r route) int { return r.prio }, tc.preferred)
			require.Equal(t, tc.want, ids(got))
			require.Equal(t, tc.routes, in, "input must not change")
		})
	}
}

func TestOrderDoesNotAlias(t *testing.T) {
	t.Parallel()
	in := []route{{"a", 1}, {"b", 2}}
	got := Order(in, func(r route) string { return r.acct }, func(r route) int { return r.prio }, nil)
	got[0].acct = "changed"
	require.Equal(t, "a", in[0].acct)
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	tests := []struct {
		initial time.Duration
		attempt int
		want    time.Duration
	}{
		{3000 * ms, 1, 3 * time.Second},
		{3000 * ms, 2, 6 * time.Second},
		{3000 * ms, 3, 12 * time.Second},
		{3000 * ms, 4, 24 * time.Second},
		{3000 * ms, 0, 3 * time.Second},
		{3000 * ms, -5, 3 * time.Second},
		{3000 * ms, 11, 3072 * time.Second},
		{3000 * ms, 12, time.Hour},
		{3000 * ms, 1000, time.Hour},
		{3000 * ms, int(^uint(0) >> 1), time.Hour},
		{time.Nanosecond, 64, time.Hour},
		{2 * time.Hour, 1, time.Hour},
		{time.Hour, 1, time.Hour},
		{0, 3, 0},
		{-time.Second, 3, 0},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, Backoff(tc.initial, tc.attempt), "initial %v attempt %d", tc.initial, tc.attempt)
	}
}
