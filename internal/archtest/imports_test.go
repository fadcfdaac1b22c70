// Package archtest holds the architecture's import rules as a test, so a
// change that breaks the shape of docs/ARCHITECTURE.md fails the suite
// instead of drifting quietly.
package archtest

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/notifyd/notifyd"

type pkg struct {
	ImportPath string
	Imports    []string
}

// packages lists every package of the module with its direct imports (not
// its tests': a test may wire anything).
func packages(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", module+"/...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	all := map[string][]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		all[strings.TrimPrefix(p.ImportPath, module+"/")] = p.Imports
	}
	if len(all) < 10 {
		t.Fatalf("go list found only %d packages", len(all))
	}
	return all
}

// rule is one import rule: packages matching from must not import what
// forbidden says.
type rule struct {
	name      string
	from      func(p string) bool
	forbidden func(imp string) bool
}

func is(names ...string) func(string) bool {
	return func(p string) bool {
		for _, n := range names {
			if p == n {
				return true
			}
		}
		return false
	}
}

func under(prefixes ...string) func(string) bool {
	return func(p string) bool {
		for _, pre := range prefixes {
			if p == pre || strings.HasPrefix(p, pre+"/") {
				return true
			}
		}
		return false
	}
}

func ours(imp string) bool { return strings.HasPrefix(imp, module+"/") }

func ourUnder(prefixes ...string) func(string) bool {
	u := under(prefixes...)
	return func(imp string) bool { return ours(imp) && u(strings.TrimPrefix(imp, module+"/")) }
}

var rules = []rule{
	{"the domain imports nothing of ours", is("internal/notify"), ours},
	{"handlers reach storage only through the service", under("internal/api", "internal/web"),
		ourUnder("internal/store", "internal/delivery", "internal/worker", "internal/jobs")},
	{"use cases and policy speak no HTTP", is("internal/service", "internal/notify", "internal/dispatch", "internal/render", "internal/otp"),
		is("net/http")},
	{"use cases call no vendor adapter", is("internal/service"), ourUnder("internal/provider")},
	{"only commands (and the e2e test kit) run the provider simulator",
		func(p string) bool { return !under("cmd", "bench", "internal/simulator", "internal/notifytest")(p) },
		ourUnder("internal/simulator")},
	{"storage knows no use case", under("internal/store"), ourUnder("internal/service", "internal/api", "internal/web", "internal/delivery", "internal/daemon")},
}

func TestImportRules(t *testing.T) {
	all := packages(t)
	for _, r := range rules {
		matched := 0
		for p, imps := range all {
			if !r.from(p) {
				continue
			}
			matched++
			for _, imp := range imps {
				if r.forbidden(imp) {
					t.Errorf("%s: %s imports %s", r.name, p, imp)
				}
			}
		}
		if matched == 0 {
			t.Errorf("%s: no package matches the rule (renamed?)", r.name)
		}
	}
}
