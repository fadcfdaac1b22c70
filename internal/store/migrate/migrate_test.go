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
	ms, err := Load(fstest.MapFS{"001_a.sql": {Data: []byte("x")}, "003_c.sql": {Data: []byte("x")}, "002_b.sql": {Data: []byte("x")}}, "sqlite")
	require.NoError(t, err)
	require.Equal(t, []int{1, 2, 3}, []int{ms[0].Version, ms[1].Version, ms[2].Version})
	e := &fakeExecer{done: map[int]bool{1: true, 3: true}}
	require.ErrorContains(t, Check(context.Background(), e, ms), "002_b.sql")
	require.NoError(t, Up(context.Background(), e, ms))
	require.True(t, e.done[2])
	require.NoError(t, Check(context.Background(), e, ms))
	_, err = Load(fstest.MapFS{"x.sql": {Data: []byte("x")}}, "sqlite")
	require.Error(t, err)
}

// A dialect's own file is read for that dialect only.
func TestDialectFiles(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{"001_a.sql": {Data: []byte("both")}, "002_b.postgres.sql": {Data: []byte("pg")},
		"002_b.sqlite.sql": {Data: []byte("lite")}, "003_c.postgres.sql": {Data: []byte("pg only")}}
	pg, err := Load(fsys, "postgres")
	require.NoError(t, err)
	require.Len(t, pg, 3)
	require.Equal(t, "pg", pg[1].SQL)
	lite, err := Load(fsys, "sqlite")
	require.NoError(t, err)
	require.Len(t, lite, 2)
	require.Equal(t, "lite", lite[1].SQL)
	require.Equal(t, 2, lite[1].Version)
}
