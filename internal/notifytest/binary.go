package notifytest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// BuildBinary compiles cmd/notifyd, with the build tags given, into a
// temp dir and answers its path (tests that run the real command: the
// crash suite, the console's `notifyd send` journey).
func BuildBinary(t *testing.T, tags ...string) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	require.NoError(t, err)
	gomod := strings.TrimSpace(string(out))
	require.NotEmpty(t, gomod, "not inside the module")
	require.NotEqual(t, os.DevNull, gomod, "not inside the module")
	bin := filepath.Join(t.TempDir(), "notifyd")
	cmd := exec.Command("go", "build", "-tags", strings.Join(tags, ","), "-o", bin, "./cmd/notifyd")
	cmd.Dir = filepath.Dir(gomod)
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, string(b))
	return bin
}
