package sendwindow

import "testing"

// TestZone: a zone is loaded once and answered again from memory; the
// server's own zone and unknown names are refused.
func TestZone(t *testing.T) {
	a, err := Zone("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	b, err := Zone("America/New_York")
	if err != nil || a != b {
		t.Fatalf("second load: %v, same location %v", err, a == b)
	}
	for _, bad := range []string{"", "Local", "Mars/Olympus", "../../etc/passwd"} {
		if _, err := Zone(bad); err == nil {
			t.Errorf("Zone(%q) accepted", bad)
		}
	}
}
