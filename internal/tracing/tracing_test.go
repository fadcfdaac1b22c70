package tracing

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

func TestParseParent(t *testing.T) {
	t.Parallel()
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	sc, ok := ParseParent(tp)
	require.True(t, ok)
	require.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", sc.TraceID().String())
	require.Equal(t, "00f067aa0ba902b7", sc.SpanID().String())
	require.True(t, sc.IsSampled())
	require.True(t, sc.IsRemote())
	require.Equal(t, tp, Format(sc))
	// A later version is read by its first four fields.
	_, ok = ParseParent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-extra")
	require.True(t, ok)
	for _, bad := range []string{"", "garbage",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", // version 00 has four fields
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",       // version ff is invalid
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01",       // zero trace id
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",       // zero span id
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",       // upper case
		"00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01"} {
		_, ok := ParseParent(bad)
		require.False(t, ok, bad)
	}
}

// Off costs nothing: a nil Tracer is off, a context without a recording
// span has no parent to carry, and an empty map of parents leaves the
// context as it is.
func TestOff(t *testing.T) {
	t.Parallel()
	var tr *Tracer
	require.False(t, tr.On())
	require.Nil(t, New(nil))
	ctx := context.Background()
	require.Empty(t, Parent(ctx))
	// A caller's traceparent alone (no span of ours recording) is not
	// carried either.
	remote, _ := ParseParent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	require.Empty(t, Parent(trace.ContextWithRemoteSpanContext(ctx, remote)))
	_, span := noop.NewTracerProvider().Tracer("x").Start(ctx, "x")
	require.Empty(t, Parent(trace.ContextWithSpan(ctx, span)))
	require.Equal(t, ctx, WithParents(ctx, nil))
	require.Equal(t, ctx, WithParent(ctx, "r1", ""))
	require.False(t, ParentOf(ctx, "r1").IsValid())
}

// TestOffAllocs: the calls the hot path makes with tracing off allocate
// nothing (not parallel: AllocsPerRun refuses parallel tests).
func TestOffAllocs(t *testing.T) {
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		_ = Parent(ctx)
		_ = WithParents(ctx, nil)
		_ = ParentOf(ctx, "r1")
	})
	require.Zero(t, allocs)
}

func TestParents(t *testing.T) {
	t.Parallel()
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	ctx := WithParents(context.Background(), map[string]string{"r1": tp, "r2": "bad"})
	require.Equal(t, tp, Format(ParentOf(ctx, "r1")))
	require.False(t, ParentOf(ctx, "r2").IsValid())
	require.False(t, ParentOf(ctx, "r3").IsValid())
	require.Equal(t, tp, Format(ParentOf(WithParent(context.Background(), "r", tp), "r")))
}
