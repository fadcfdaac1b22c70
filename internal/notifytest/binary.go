package notifytest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// BuildBinary compiles cmd/notifyd into a temp dir and answers its path
// (tests that run the real command: the crash suite, the console's
// `notifyd send` journey).
func BuildBinary(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	require.NoError(t, err)
	gomod := strings.TrimSpace(string(out))
	require.NotEmpty(t, gomod, "not inside the module")
	require.NotEqual(t, os.DevNull, gomod, "not inside the module")
	bin := filepath.Join(t.TempDir(), "notifyd")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/notifyd")
	cmd.Dir = filepath.Dir(gomod)
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, string(b))
	return bin
}
