package thrift_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/idl/thrift"
)

// These tests check that the loader tells included files apart by where
// they really are, not by how their paths are spelled: one file reached by
// two spellings (relative and absolute, or through a symbolic link) is
// loaded once, and a file including itself through a link is an include
// cycle.

// writeFiles writes each file (path relative to dir, slash-separated) and
// makes each link (name relative to dir, target as given).
func writeFiles(t *testing.T, dir string, files, links map[string]string) {
	t.Helper()
	for name, src := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, filepath.FromSlash(name))); err != nil {
			t.Skipf("cannot make a symbolic link: %v", err)
		}
	}
}

// reachable returns every file reached from f through its includes.
func reachable(f *thrift.File) map[*thrift.File]bool {
	seen := map[*thrift.File]bool{}
	var walk func(*thrift.File)
	walk = func(f *thrift.File) {
		if f == nil || seen[f] {
			return
		}
		seen[f] = true
		for _, g := range f.IncludeMap {
			walk(g)
		}
	}
	walk(f)
	return seen
}

// parseWithin parses path, failing the test if that takes more than limit;
// on a timeout it removes the links (so that the parse, wherever it is, ends
// soon) and waits for it.
func parseWithin(t *testing.T, limit time.Duration, path string, opts thrift.ParseOptions, links ...string) (*thrift.File, error) {
	t.Helper()
	type result struct {
		f   *thrift.File
		err error
	}
	done := make(chan result, 1)
	go func() {
		f, err := thrift.ParseFile(path, opts)
		done <- result{f, err}
	}()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.f, r.err
	case <-timer.C:
		for _, l := range links {
			os.Remove(l)
		}
		r := <-done
		t.Fatalf("ParseFile(%s) still loading after %v (then, its links removed: %.300v)", path, limit, r.err)
		return nil, nil
	}
}

// A file included relative to the including file (idl/common.thrift) and
// again through an include directory given by its absolute path, or
// through a link to the directory, is loaded once: loaded twice, it was two
// files generating the same Go file (common/common.go). Its path is the one
// it was first reached by.
func TestIncludeSameFileTwoSpellings(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"idl/main.thrift":     "namespace go api\ninclude \"common.thrift\"\ninclude \"svc/user.thrift\"\nstruct Req { 1: common.Base b, 2: user.User u }\n",
		"idl/svc/user.thrift": "namespace go svc\ninclude \"common.thrift\"\nstruct User { 1: common.Base base }\n",
		"idl/common.thrift":   "namespace go common\nstruct Base { 1: i32 id }\n",
	}, map[string]string{"alias": "idl"})
	t.Chdir(dir)
	for _, incDir := range []string{filepath.Join(dir, "idl"), "alias", filepath.Join(dir, "alias")} {
		f, err := thrift.ParseFile(filepath.Join("idl", "main.thrift"), thrift.ParseOptions{IncludeDirs: []string{incDir}})
		if err != nil {
			t.Errorf("-I %s: %v", incDir, err)
			continue
		}
		common, user := f.IncludeMap["common"], f.IncludeMap["user"]
		if common == nil || user == nil {
			t.Fatalf("-I %s: IncludeMap = %v", incDir, f.IncludeMap)
		}
		if got := user.IncludeMap["common"]; got != common {
			t.Errorf("-I %s: common.thrift loaded twice: as %s and as %s", incDir, common.Path, got.Path)
		}
		if want := filepath.Join("idl", "common.thrift"); common.Path != want {
			t.Errorf("-I %s: common.thrift has path %s, want %s", incDir, common.Path, want)
		}
		if n := len(reachable(f)); n != 3 {
			t.Errorf("-I %s: %d files loaded, want 3", incDir, n)
		}
	}
}

// A file including itself through a link to its directory (sub -> .) is an
// include cycle, reported as one: it was read as sub/a.thrift,
// sub/sub/a.thrift, ... until the system refused to follow more links.
func TestIncludeCycleThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.thrift": "include \"sub/a.thrift\"\nstruct A {}\n"},
		map[string]string{"sub": "."})
	a := filepath.Join(dir, "a.thrift")
	_, err := parseWithin(t, 10*time.Second, a, thrift.ParseOptions{}, filepath.Join(dir, "sub"))
	var list thrift.ErrorList
	if !errors.As(err, &list) || len(list) != 1 {
		t.Fatalf("got %.500v, want one include cycle", err)
	}
	want := a + ":1:1: include cycle: " + a + " -> " + filepath.Join(dir, "sub", "a.thrift") + " (the same file as " + a + ")"
	if got := list[0].Error(); got != want {
		t.Fatalf("got  %.500s\nwant %s", got, want)
	}
}

// Two links to the directory (s1, s2 -> .) and files including each other
// through them are include cycles, reported at once: every spelling
// (s1/s2/s1/b.thrift, ...) being new, the loader loaded 2^depth files, until
// the system's limit of links in a path, taking minutes and gigabytes.
func TestIncludeCycleThroughTwoSymlinksBounded(t *testing.T) {
	dir := t.TempDir()
	const src = "include \"s1/b.thrift\"\ninclude \"s2/c.thrift\"\n"
	writeFiles(t, dir, map[string]string{
		"a.thrift": src + "struct A {}\n",
		"b.thrift": src + "struct B {}\n",
		"c.thrift": src + "struct C {}\n",
	}, map[string]string{"s1": ".", "s2": "."})
	t.Chdir(dir)
	_, err := parseWithin(t, 10*time.Second, "a.thrift", thrift.ParseOptions{},
		filepath.Join(dir, "s1"), filepath.Join(dir, "s2"))
	j := filepath.Join
	want := []string{
		j("s1", "b.thrift") + ":1:1: include cycle: " + j("s1", "b.thrift") + " -> " + j("s1", "s1", "b.thrift") +
			" (the same file as " + j("s1", "b.thrift") + ")",
		j("s1", "s2", "c.thrift") + ":1:1: include cycle: " + j("s1", "b.thrift") + " -> " + j("s1", "s2", "c.thrift") +
			" -> " + j("s1", "s2", "s1", "b.thrift") + " (the same file as " + j("s1", "b.thrift") + ")",
		j("s1", "s2", "c.thrift") + ":2:1: include cycle: " + j("s1", "s2", "c.thrift") + " -> " + j("s1", "s2", "s2", "c.thrift") +
			" (the same file as " + j("s1", "s2", "c.thrift") + ")",
	}
	var list thrift.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("got %.500v, want %d include cycles", err, len(want))
	}
	if len(list) != len(want) {
		t.Fatalf("got %d errors (%.500v), want %d include cycles", len(list), err, len(want))
	}
	for i := range want {
		if got := list[i].Error(); got != want[i] {
			t.Errorf("error %d:\n got: %.500s\nwant: %s", i, got, want[i])
		}
	}
}

// Without a cycle, files reached through two links by ever more spellings
// (level i of M and N files each including level i+1 of both, through s1
// and s2) are each loaded once: 2 per level, not 2^level.
func TestIncludeThroughTwoSymlinksLoadsEachFileOnce(t *testing.T) {
	const levels = 12
	dir := t.TempDir()
	files := map[string]string{}
	body := func(i int) string {
		if i == levels {
			return ""
		}
		return fmt.Sprintf("include \"s1/M%d.thrift\"\ninclude \"s2/N%d.thrift\"\n", i+1, i+1)
	}
	files["main.thrift"] = body(0)
	for i := 1; i <= levels; i++ {
		files[fmt.Sprintf("M%d.thrift", i)] = body(i)
		files[fmt.Sprintf("N%d.thrift", i)] = body(i)
	}
	writeFiles(t, dir, files, map[string]string{"s1": ".", "s2": "."})
	t.Chdir(dir)
	f, err := parseWithin(t, 10*time.Second, "main.thrift", thrift.ParseOptions{},
		filepath.Join(dir, "s1"), filepath.Join(dir, "s2"))
	if err != nil {
		t.Fatalf("%.500v", err)
	}
	if n := len(reachable(f)); n != 2*levels+1 {
		t.Fatalf("%d files loaded, want %d", n, 2*levels+1)
	}
	// Each file has the path it was first reached by, depth first.
	g := f
	for i := 1; i <= levels; i++ {
		g = g.IncludeMap[fmt.Sprintf("M%d", i)]
		if want := filepath.Join(strings.Repeat("s1"+string(filepath.Separator), i) + fmt.Sprintf("M%d.thrift", i)); g == nil || g.Path != want {
			t.Fatalf("M%d: got %v, want a file with path %s", i, g, want)
		}
	}
}
