package migrate

import (
	"context"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

type fakeExecer struct{ done map[int]bool }

func (f *fakeExecer) Applied(context.Context) (map[int]bool, error) { return f.done, nil }
func (f *fakeExecer) Apply(_ context.Context, m Migration) error {
	f.done[m.Version] = true
	return nil
}

// A migration merged after a higher-numbered one still runs, and Check
// names what is missing.
func TestUpAppliesGaps(t *testing.T) {
	t.Parallel()
	ms, err := Load(fstest.MapFS{"001_a.sql": {Data: []byte("x")}, "003_c.sql": {Data: []byte("x")}, "002_b.sql": {Data: []byte("x")}})
	require.NoError(t, err)
	require.Equal(t, []int{1, 2, 3}, []int{ms[0].Version, ms[1].Version, ms[2].Version})
	e := &fakeExecer{done: map[int]bool{1: true, 3: true}}
	require.ErrorContains(t, Check(context.Background(), e, ms), "002_b.sql")
	require.NoError(t, Up(context.Background(), e, ms))
	require.True(t, e.done[2])
	require.NoError(t, Check(context.Background(), e, ms))
	_, err = Load(fstest.MapFS{"x.sql": {Data: []byte("x")}})
	require.Error(t, err)
}
