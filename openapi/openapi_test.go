package openapi_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/openapi"
)

// multiType matches a `type:` list naming more than one type besides
// "null" (OpenAPI 3.1 allows it; code generators such as oapi-codegen
// cannot read it: use oneOf).
var multiType = regexp.MustCompile(`^\s*type:\s*\[(.*)\]\s*$`)

// TestOpenAPIGeneratorFriendly pins what oapi-codegen choked on (issue 17
// finding 13) without needing the tool: no multi-type `type:` lists, and
// no name used by both components.responses and components.schemas (both
// become Go types of that name).
func TestOpenAPIGeneratorFriendly(t *testing.T) {
	section := ""
	names := map[string]map[string]bool{"responses": {}, "schemas": {}}
	inComponents := false
	sc := bufio.NewScanner(bytes.NewReader(openapi.OpenAPI))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if m := multiType.FindStringSubmatch(line); m != nil {
			var types []string
			for _, ty := range strings.Split(m[1], ",") {
				if ty = strings.Trim(strings.TrimSpace(ty), `"'`); ty != "null" {
					types = append(types, ty)
				}
			}
			if len(types) > 1 {
				t.Errorf("openapi.yaml:%d: %q names several types; use oneOf", n, strings.TrimSpace(line))
			}
		}
		indent := len(line) - len(strings.TrimLeft(line, " "))
		key, _, _ := strings.Cut(strings.TrimSpace(line), ":")
		switch {
		case strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#"):
		case indent == 0:
			inComponents, section = line == "components:", ""
		case inComponents && indent == 2:
			section = key
		case inComponents && indent == 4 && names[section] != nil:
			names[section][key] = true
		}
	}
	require.NotEmpty(t, names["responses"], "components.responses")
	require.NotEmpty(t, names["schemas"], "components.schemas")
	for name := range names["responses"] {
		if names["schemas"][name] {
			t.Errorf("%s is both a response and a schema component: generated clients get two types of one name", name)
		}
	}
}

// TestOpenAPIGeneratesGoClient feeds the served document to oapi-codegen
// (pinned in testdata/oapiclient/go.mod as a tool of a module of its own,
// so the service's dependencies stay as they are), compiles the client it
// generates, and runs testdata/oapiclient/smoke_test.go with it against a
// running daemon: log in, create a key, page the audit log, send, look the
// send up, list attempts, each answer decoded as documented (issue 17
// finding 13).
func TestOpenAPIGeneratesGoClient(t *testing.T) {
	if testing.Short() {
		t.Skip("builds oapi-codegen; skipped with -short")
	}
	dir := t.TempDir()
	for _, f := range []string{"go.mod", "go.sum", "smoke_test.go"} {
		b, err := os.ReadFile(filepath.Join("testdata", "oapiclient", f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o600))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "openapi.yaml"), openapi.OpenAPI, 0o600))

	goTool := func(args ...string) (string, error) {
		return goIn(dir, nil, args...)
	}
	if out, err := goTool("mod", "download"); err != nil {
		t.Skipf("oapi-codegen v2.8.2 cannot be obtained from the module proxy: %s", firstLine(out))
	}
	if out, err := goTool("tool", "oapi-codegen", "-generate", "types,client", "-package", "oapiclient",
		"-o", "client.gen.go", "openapi.yaml"); err != nil {
		t.Fatalf("oapi-codegen cannot read the document: %v\n%s", err, out)
	}
	if out, err := goTool("vet", "./..."); err != nil {
		t.Fatalf("the generated client does not compile: %v\n%s", err, out)
	}

	env := notifytest.StartDaemon(t)
	if out, err := goIn(dir, []string{"NOTIFYD_SMOKE_URL=" + env.Daemon.URL(), "NOTIFYD_SMOKE_EMAIL=" + env.Email,
		"NOTIFYD_SMOKE_PASSWORD=" + env.Password}, "test", "-count=1", "-run", "TestGeneratedClient", "-v", "."); err != nil ||
		!strings.Contains(out, "--- PASS: TestGeneratedClient") {
		t.Fatalf("the generated client against a running daemon: %v\n%s", err, out)
	}
}

// goIn runs the go command in dir, outside any workspace, with extra
// environment variables.
func goIn(dir string, extra []string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly"), extra...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
