package storetest_test

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const notifyPath = "github.com/notifyd/notifyd/internal/notify"

// TestEveryVerbIsPinned fails when a method of notify.Tx or notify.Store
// is never called by the conformance suite, so a new store verb cannot
// land without a test that runs it on both backends. The suite's sources
// are type-checked, so only a call on a store transaction or a store
// counts (a rows.Close() is not Store.Close). Whether the call's result
// is asserted is left to review: the check finds verbs the suite never
// runs.
func TestEveryVerbIsPinned(t *testing.T) {
	t.Parallel()
	pkg, info := checkSuite(t)
	var notify *types.Package
	for _, p := range pkg.Imports() {
		if p.Path() == notifyPath {
			notify = p
		}
	}
	if notify == nil {
		t.Fatalf("the suite does not import %s", notifyPath)
	}
	for _, name := range []string{"Tx", "Store"} {
		iface := notify.Scope().Lookup(name).Type().Underlying().(*types.Interface)
		called := map[string]bool{}
		for _, sel := range info.Selections {
			if sel.Kind() != types.MethodVal {
				continue
			}
			if m, ok := sel.Obj().(*types.Func); ok && (implements(sel.Recv(), iface) || isMethodOf(m, iface)) {
				called[m.Name()] = true
			}
		}
		var missing []string
		for i := 0; i < iface.NumMethods(); i++ {
			if m := iface.Method(i).Name(); !called[m] {
				missing = append(missing, m)
			}
		}
		if len(missing) > 0 {
			t.Errorf("notify.%s methods the conformance suite never calls (add a test to storetest): %s",
				name, strings.Join(missing, ", "))
		}
		if len(called) < iface.NumMethods()/2 {
			t.Errorf("found calls of only %d notify.%s methods: the check no longer sees the suite", len(called), name)
		}
	}
}

// implements reports whether recv (or a pointer to it) implements iface.
func implements(recv types.Type, iface *types.Interface) bool {
	if types.Implements(recv, iface) {
		return true
	}
	_, isPtr := recv.(*types.Pointer)
	return !isPtr && types.Implements(types.NewPointer(recv), iface)
}

// isMethodOf reports whether m is one of iface's own method objects (a
// call through an embedded interface such as notify.PipelineTx).
func isMethodOf(m *types.Func, iface *types.Interface) bool {
	for i := 0; i < iface.NumMethods(); i++ {
		if iface.Method(i) == m {
			return true
		}
	}
	return false
}

// checkSuite type-checks the suite's non-test files, importing its
// dependencies from the export data the go command built for them.
func checkSuite(t *testing.T) (*types.Package, *types.Info) {
	t.Helper()
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	exports := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), "\t"); ok && file != "" {
			exports[path] = file
		}
	}
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	lookup := func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, os.ErrNotExist
		}
		return os.Open(file)
	}
	info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", lookup)}
	pkg, err := conf.Check("github.com/notifyd/notifyd/internal/store/storetest", fset, files, info)
	if err != nil {
		t.Fatalf("type-check the suite: %v", err)
	}
	return pkg, info
}
