package pacing

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSplitArray: the scan finds the same items a decode does, whatever
// the items hold (strings with brackets, commas, quotes and escapes;
// nesting; numbers; literals).
func TestSplitArray(t *testing.T) {
	t.Parallel()
	for _, v := range []any{
		[]any{},
		[]any{1},
		[]any{"a,b", "c]d", `e"f\g`, map[string]any{"x": []any{1, "}", map[string]any{"y": "{[,"}}}, nil, true, 2.5, -3},
		[]map[string]string{{"to": "a@example.com", "html": "<p>&</p>"}, {"to": "b@example.com"}},
	} {
		raw, err := json.Marshal(v)
		require.NoError(t, err)
		var want []json.RawMessage
		require.NoError(t, json.Unmarshal(raw, &want))
		got := splitArray(raw)
		require.Len(t, got, len(want), string(raw))
		for i := range want {
			require.Equal(t, string(want[i]), string(got[i]), string(raw))
		}
	}
}
