package newsletter

import (
	"errors"
	"testing"
)

// A panic in a fan-out batch goroutine comes back as the run's error
// instead of ending the process.
func TestCaught(t *testing.T) {
	if err := caught(func() error { panic("boom") }); err == nil || err.Error() != "fan-out batch panicked: boom" {
		t.Fatalf("panic: got %v", err)
	}
	want := errors.New("plain")
	if err := caught(func() error { return want }); err != want {
		t.Fatalf("error: got %v", err)
	}
	if err := caught(func() error { return nil }); err != nil {
		t.Fatalf("nil: got %v", err)
	}
}
