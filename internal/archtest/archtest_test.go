// Package archtest holds the architecture's import rules as a test, so a
// change that breaks the shape of docs/ARCHITECTURE.md fails the suite
// instead of drifting quietly. The rules are checked on what each package
// reaches, not only on what it imports itself: a room that reaches
// net/http through a helper package breaks the rule as much as one that
// imports it.
package archtest

import (
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/notifyd/notifyd"

// pkg is one package of the module: its direct imports and everything it
// reaches (Deps), both without its tests' imports (a test may wire
// anything).
type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// packages lists every package of the module by its path inside the
// module.
func packages(t *testing.T) map[string]pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports,Deps", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	all := map[string]pkg{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		all[strings.TrimPrefix(p.ImportPath, module+"/")] = p
	}
	if len(all) < 10 {
		t.Fatalf("go list found only %d packages", len(all))
	}
	return all
}

// The house, floor by floor. Every package under internal/ has a kind;
// a new one must be given its kind here (TestEveryPackageHasAKind), which
// is where its rules come from.
var (
	// domain is the leaf: records, states, errors, the store's verbs.
	domain = []string{"internal/notify"}
	// ground is what every room stands on and no room owns.
	ground = []string{"internal/usecase", "internal/compose", "internal/gate"}
	// rooms are the use cases, one kind of work each. They meet in the
	// domain and the store, never import each other, and reach no HTTP,
	// SQL, queue or vendor adapter.
	rooms = []string{"internal/accounts", "internal/categories", "internal/identities", "internal/inboundhooks", "internal/inbox", "internal/limits", "internal/newsletter",
		"internal/engagement", "internal/providers", "internal/receipts", "internal/recipients", "internal/retention", "internal/sends", "internal/suppressions", "internal/templates",
		"internal/verification", "internal/webhooks", "internal/windows", "internal/workflows"}
	// pure are policies and primitives without I/O of their own.
	pure = []string{"internal/render", "internal/otp", "internal/secret", "internal/mailcheck", "internal/groupcommit",
		"internal/dispatch", "internal/bounce", "internal/sendwindow", "internal/redact", "internal/tracing", "internal/testmode"}
	// adapters are the engine and every technology: HTTP, storage, the
	// queue, vendors, metrics, configuration, the composition root, the
	// Go runtime's tuning.
	adapters = []string{"internal/api", "internal/web", "internal/server", "internal/daemon", "internal/config",
		"internal/delivery", "internal/worker", "internal/jobs", "internal/metrics", "internal/store",
		"internal/provider", "internal/simulator", "internal/crashfault", "internal/rooms", "internal/bounce/snshttp",
		"internal/tracing/otlp", "internal/gctune"}
	// kits are test kits: only tests and other kits may import them.
	kits = []string{"internal/notifytest", "internal/provider/providertest", "internal/store/storetest",
		"internal/store/testdb", "internal/mailcheck/dnstest"}
	// tests are packages of tests only (end-to-end suites, this one).
	tests = []string{"internal/e2e", "internal/archtest"}
)

// in reports whether p is one of the paths of set or below one of them.
func in(set []string, p string) bool {
	for _, s := range set {
		if p == s || strings.HasPrefix(p, s+"/") {
			return true
		}
	}
	return false
}

// kindOf is the kind of package p (the most specific path wins, so
// internal/provider/providertest is a kit, not an adapter).
func kindOf(p string) string {
	best, kind := "", ""
	for _, k := range []struct {
		name string
		set  []string
	}{{"domain", domain}, {"ground", ground}, {"room", rooms}, {"pure", pure}, {"adapter", adapters},
		{"kit", kits}, {"tests", tests}} {
		for _, s := range k.set {
			if (p == s || strings.HasPrefix(p, s+"/")) && len(s) > len(best) {
				best, kind = s, k.name
			}
		}
	}
	return kind
}

// ours is the path inside the module of imp, and whether imp is ours.
func ours(imp string) (string, bool) {
	if !strings.HasPrefix(imp, module+"/") {
		return "", false
	}
	return strings.TrimPrefix(imp, module+"/"), true
}

// rule is one import rule: a package of from must not reach (or, when
// direct, import) a package forbidden says.
type rule struct {
	name      string
	from      func(p string) bool
	direct    bool // only what it imports itself
	forbidden func(p, imp string) bool
}

func ofKind(kinds ...string) func(string) bool {
	return func(p string) bool { return slices.Contains(kinds, kindOf(p)) }
}

func is(names ...string) func(string) bool {
	return func(p string) bool { return slices.Contains(names, p) }
}

// ourKind forbids our packages of the given kinds.
func ourKind(kinds ...string) func(p, imp string) bool {
	return func(_, imp string) bool {
		q, ok := ours(imp)
		return ok && slices.Contains(kinds, kindOf(q))
	}
}

// ourUnder forbids our packages under the given paths.
func ourUnder(paths ...string) func(p, imp string) bool {
	return func(_, imp string) bool {
		q, ok := ours(imp)
		return ok && in(paths, q)
	}
}

// external forbids packages outside the module with one of the prefixes.
func external(prefixes ...string) func(p, imp string) bool {
	return func(_, imp string) bool {
		for _, pre := range prefixes {
			if imp == pre || strings.HasPrefix(imp, pre+"/") {
				return true
			}
		}
		return false
	}
}

func any(fs ...func(p, imp string) bool) func(p, imp string) bool {
	return func(p, imp string) bool {
		for _, f := range fs {
			if f(p, imp) {
				return true
			}
		}
		return false
	}
}

// technology is what rooms, the ground and pure policy never reach: HTTP,
// SQL drivers and the queue.
// (database/sql/driver alone is an interface package ids implement.)
var technology = any(external("net/http", "github.com/jackc", "github.com/riverqueue", "modernc.org/sqlite"),
	func(_, imp string) bool { return imp == "database/sql" })

var rules = []rule{
	{name: "the domain imports nothing of ours", from: ofKind("domain"), direct: true,
		forbidden: func(_, imp string) bool { _, ok := ours(imp); return ok }},
	{name: "rooms reach no HTTP, SQL or queue, even through another package", from: ofKind("room"), forbidden: technology},
	{name: "rooms reach no adapter", from: ofKind("room"), forbidden: ourKind("adapter")},
	{name: "rooms do not import each other (they meet in the domain and the store)", from: ofKind("room"),
		forbidden: func(p, imp string) bool {
			q, ok := ours(imp)
			return ok && kindOf(q) == "room" && q != p
		}},
	{name: "the ground stands below every room and adapter", from: ofKind("ground"),
		forbidden: any(technology, ourKind("room", "adapter"))},
	{name: "pure policy reaches no HTTP, SQL or queue", from: ofKind("pure"), forbidden: technology},
	{name: "dispatch imports no provider package", from: is("internal/dispatch"), forbidden: ourUnder("internal/provider")},
	{name: "production code imports no test kit", from: func(p string) bool { return !ofKind("kit", "tests")(p) },
		forbidden: ourKind("kit")},
	{name: "handlers reach storage only through the rooms", from: is("internal/api", "internal/web"), direct: true,
		forbidden: ourUnder("internal/store", "internal/delivery", "internal/worker", "internal/jobs")},
	{name: "rooms call no vendor adapter", from: ofKind("room"), forbidden: ourUnder("internal/provider")},
	// The daemon runs one in process for test-mode requests (issue 36),
	// served through an in-memory transport, never on a port.
	{name: "only commands, the composition root (test mode) and the e2e test kit run the provider simulator",
		from: func(p string) bool {
			return !in([]string{"cmd", "bench", "internal/simulator", "internal/notifytest", "internal/daemon"}, p)
		}, direct: true, forbidden: ourUnder("internal/simulator")},
	{name: "storage knows no use case", from: func(p string) bool { return in([]string{"internal/store"}, p) },
		direct: true, forbidden: any(ourKind("room", "ground"), ourUnder("internal/api", "internal/web",
			"internal/delivery", "internal/daemon"))},
}

// broken lists what the rules find wrong in all, one line each.
func broken(all map[string]pkg) []string {
	var out []string
	for _, r := range rules {
		for p, pk := range all {
			if !r.from(p) {
				continue
			}
			reach := pk.Deps
			if r.direct {
				reach = pk.Imports
			}
			for _, imp := range reach {
				if r.forbidden(p, imp) {
					how := "reaches"
					if slices.Contains(pk.Imports, imp) {
						how = "imports"
					}
					out = append(out, r.name+": "+p+" "+how+" "+imp)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

func TestImportRules(t *testing.T) {
	for _, line := range broken(packages(t)) {
		t.Error(line)
	}
}

// Every package under internal/ has a kind, so a new one is placed on
// purpose (and gets its kind's rules) rather than by accident.
func TestEveryPackageHasAKind(t *testing.T) {
	for p := range packages(t) {
		if strings.HasPrefix(p, "internal/") && kindOf(p) == "" {
			t.Errorf("%s has no kind: add it to a list of internal/archtest (room, ground, pure, adapter, kit, tests)", p)
		}
	}
}

// The rules bite: a made-up room that reaches net/http through a pure
// package, imports another room and a test kit, is found on every count.
func TestRulesBite(t *testing.T) {
	all := map[string]pkg{
		"internal/newsletter": {Imports: []string{module + "/internal/accounts", module + "/internal/notifytest", module + "/internal/mailcheck"},
			Deps: []string{module + "/internal/accounts", module + "/internal/notifytest", module + "/internal/mailcheck", "net/http"}},
		"internal/dispatch": {Imports: []string{module + "/internal/provider"}, Deps: []string{module + "/internal/provider", "net/http"}},
		"internal/notify":   {Imports: []string{module + "/internal/otp"}, Deps: []string{module + "/internal/otp"}},
	}
	got := strings.Join(broken(all), "\n")
	for _, want := range []string{
		"rooms reach no HTTP, SQL or queue, even through another package: internal/newsletter reaches net/http",
		"rooms do not import each other (they meet in the domain and the store): internal/newsletter imports " + module + "/internal/accounts",
		"production code imports no test kit: internal/newsletter imports " + module + "/internal/notifytest",
		"dispatch imports no provider package: internal/dispatch imports " + module + "/internal/provider",
		"pure policy reaches no HTTP, SQL or queue: internal/dispatch reaches net/http",
		"the domain imports nothing of ours: internal/notify imports " + module + "/internal/otp",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
}
