// Command petrel is Petrel's tool: `petrel gen` compiles Thrift IDL into Go.
//
//	petrel gen -out DIR -module IMPORTPATH [-I dir]... [-keep-unknown] [-service NAME] file.thrift
//
// It writes one Go package per Thrift file (the file and everything it
// includes) under DIR, in the directory its `namespace go` names (a.b.c goes
// to DIR/a/b/c, package c), or, without one, in DIR/<base name of the file>.
// IMPORTPATH is the Go import path of DIR; generated packages use it to
// import each other. When DIR is in a Go module (a go.mod in it or above),
// an IMPORTPATH that is not DIR's import path there (such as the module's
// own path, which Kitex's -module takes) is refused, naming the right one.
// Errors in the IDL are printed as file:line:col: message and make the
// command exit with status 1. Generated files from an earlier
// run are replaced; a file in the place of one that is not generated (has
// no "// Code generated ... DO NOT EDIT." line) is the user's, and makes the
// command fail, naming it, before anything is written.
//
// With -service NAME it also writes, in DIR itself, the skeleton of a server
// of service NAME (package main): main.go, which listens on the address of
// its -addr flag, and handler.go, whose methods return a not-implemented
// error. Existing files are never overwritten (the command says which it
// left alone), so the handler can be edited and the IDL regenerated.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/petrel-rpc/petrel/idl/thrift"
	"github.com/petrel-rpc/petrel/internal/gen"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `Petrel is Petrel's RPC tool.

Usage:

	petrel gen [flags] file.thrift    generate Go code from Thrift IDL

Run "petrel gen -h" for the flags of gen.
`

// run executes the command line args and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "gen":
		return runGen(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "petrel: unknown command %q\n\n%s", args[0], usage)
	return 2
}

// dirList is a repeatable -I flag.
type dirList []string

func (d *dirList) String() string     { return strings.Join(*d, ",") }
func (d *dirList) Set(v string) error { *d = append(*d, v); return nil }

func runGen(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("petrel gen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "output directory: the root of the generated packages (required)")
	module := fs.String("module", "", "Go import path of the output directory, used when generated packages import each other (required)")
	var includes dirList
	fs.Var(&includes, "I", "directory to search for included IDL files (repeatable; searched in order after the including file's directory)")
	keep := fs.Bool("keep-unknown", false, "make structs keep fields they do not know (raw bytes) and write them back unchanged")
	service := fs.String("service", "", "also write a server skeleton for this service (main.go and handler.go in DIR, package main; never overwritten)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: petrel gen -out DIR -module IMPORTPATH [-I dir]... [-keep-unknown] [-service NAME] file.thrift

Gen compiles a Thrift IDL file, and every file it includes, into Go: one
package per Thrift file, placed under DIR by its "namespace go" (a.b.c goes to
DIR/a/b/c, package c) or, without one, by the file's base name. Each struct
gets binary and compact codecs (BLength, FastWrite, FastRead and their
Compact twins); each service gets argument and result structs, a
<Service>ServiceInfo method table, the handler interface <Service>, a client
(<Service>Client, New<Service>Client) and New<Service>Server.

With -service NAME, gen also writes DIR/main.go (a server of service NAME
listening on its -addr flag) and DIR/handler.go (a handler whose methods
return a not-implemented error), package main, unless they exist: they are
yours to edit and are never overwritten.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 1 {
		// Parsing stops at the first argument that is not a flag, so flags
		// written after the file arrive here as more files.
		for _, a := range fs.Args()[1:] {
			if strings.HasPrefix(a, "-") && len(a) > 1 {
				fmt.Fprintf(stderr, "petrel gen: flag %s comes after the IDL file %s; put every flag before the file\n", a, fs.Arg(0))
				fs.Usage()
				return 2
			}
		}
		if fs.NArg() == 0 {
			fmt.Fprintln(stderr, "petrel gen: want exactly one IDL file, got none")
		} else {
			fmt.Fprintf(stderr, "petrel gen: want exactly one IDL file, got %d: %s\n", fs.NArg(), strings.Join(fs.Args(), " "))
		}
		fs.Usage()
		return 2
	}
	if *out == "" || *module == "" {
		fmt.Fprintln(stderr, "petrel gen: -out and -module are required")
		fs.Usage()
		return 2
	}
	if fi, err := os.Stat(*out); err == nil && !fi.IsDir() {
		fmt.Fprintf(stderr, "petrel gen: -out %s is a file, not a directory\n", *out)
		return 2
	} else if err != nil {
		if file := fileAbove(*out); file != "" {
			fmt.Fprintf(stderr, "petrel gen: -out %s: %s is a file, not a directory\n", *out, file)
			return 2
		}
	}
	if want, gomod := importPathOf(*out); want != "" && strings.TrimSuffix(*module, "/") != want {
		fmt.Fprintf(stderr, "petrel gen: -module %s is not the import path of -out %s: that directory is in the module of %s, where its import path is %s; pass -module %s (the import path of -out, not the module's path)\n", *module, *out, gomod, want, want)
		return 2
	}
	f, err := thrift.ParseFile(fs.Arg(0), thrift.ParseOptions{IncludeDirs: includes})
	if err != nil {
		var list thrift.ErrorList
		if errors.As(err, &list) {
			for _, e := range list {
				fmt.Fprintln(stderr, e.Error())
			}
		} else {
			fmt.Fprintln(stderr, err)
		}
		return 1
	}
	files, err := gen.Generate(f, gen.Options{Module: *module, KeepUnknown: *keep})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	// The skeleton is made before anything is written, so that an unknown
	// service leaves the output directory as it was.
	var scaffold []gen.File
	if *service != "" {
		scaffold, err = gen.Scaffold(f, *service, gen.Options{Module: *module, KeepUnknown: *keep})
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	// A file in the way that petrel did not generate is the user's: check
	// them all before writing any, so that gen writes all or nothing.
	for _, gf := range files {
		p := filepath.Join(*out, filepath.FromSlash(gf.Path))
		if err := checkReplaceable(p); err != nil {
			fmt.Fprintln(stderr, "petrel gen:", err)
			return 1
		}
	}
	if err := writeGenerated(*out, files); err != nil {
		fmt.Fprintln(stderr, "petrel gen:", err)
		return 1
	}
	for _, gf := range scaffold {
		p := filepath.Join(*out, filepath.FromSlash(gf.Path))
		switch err := writeNew(p, gf.Content); {
		case errors.Is(err, os.ErrExist):
			fmt.Fprintf(stdout, "petrel gen: %s exists; left as it is (delete it to get a new skeleton)\n", p)
		case err != nil:
			fmt.Fprintln(stderr, "petrel gen:", err)
			return 1
		default:
			fmt.Fprintf(stdout, "petrel gen: wrote %s\n", p)
		}
	}
	return 0
}

// fileAbove returns the nearest existing parent of dir if that is not a
// directory (-out file/gen, which could never be made), and "" otherwise.
func fileAbove(dir string) string {
	for p := filepath.Dir(filepath.Clean(dir)); ; p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil {
			if fi.IsDir() {
				return ""
			}
			return p
		}
		if parent := filepath.Dir(p); parent == p {
			return ""
		}
	}
}

// importPathOf returns the Go import path of dir, which need not exist,
// and the go.mod that gives it: the nearest go.mod in dir or above, whose
// module path is joined with dir's path below it. It returns "", "" when
// there is no such go.mod or its module line cannot be read, so that gen
// then takes -module as it is.
func importPathOf(dir string) (path, gomod string) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", ""
	}
	for root := abs; ; {
		gomod = filepath.Join(root, "go.mod")
		if fi, err := os.Stat(gomod); err == nil && fi.Mode().IsRegular() {
			mod := modulePath(gomod)
			rel, err := filepath.Rel(root, abs)
			if mod == "" || err != nil {
				return "", ""
			}
			if rel == "." {
				return mod, gomod
			}
			return mod + "/" + filepath.ToSlash(rel), gomod
		}
		parent := filepath.Dir(root)
		if parent == root {
			return "", ""
		}
		root = parent
	}
}

// modulePath returns the module path that the go.mod file p declares, or ""
// if it declares none that can be read.
func modulePath(p string) string {
	src, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(src), "\n") {
		line, _, _ = strings.Cut(line, "//")
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module")
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '\t' && rest[0] != '"' && rest[0] != '`') {
			continue
		}
		rest = strings.TrimSpace(rest)
		if len(rest) > 0 && (rest[0] == '"' || rest[0] == '`') {
			if rest, err = strconv.Unquote(rest); err != nil {
				return ""
			}
		}
		if rest == "" || strings.ContainsAny(rest, " \t(") {
			return ""
		}
		return rest
	}
	return ""
}

// generatedLine matches the line that marks a Go file as generated, which
// must come before the package clause.
var generatedLine = regexp.MustCompile(`^// Code generated .* DO NOT EDIT\.$`)

// checkReplaceable returns nil if p does not exist or is a generated Go file
// (one that says "// Code generated ... DO NOT EDIT." before its package
// clause), which gen may replace, and otherwise an error naming p.
func checkReplaceable(p string) error {
	src, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(src), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if generatedLine.MatchString(line) {
			return nil
		}
		if strings.HasPrefix(line, "package ") {
			break
		}
	}
	return fmt.Errorf("%s exists and is not generated code (it has no \"// Code generated ... DO NOT EDIT.\" line), so it was left as it is and nothing was written: move it away or choose another -out", p)
}

// writeGenerated writes files under out, all or none: each goes first to a
// temporary file beside its place, and only once all are written are they
// renamed into place, so that a failure (a full disk, say) leaves the files
// of an earlier run whole and no temporary file behind.
func writeGenerated(out string, files []gen.File) error {
	var tmps, dsts []string
	removeTmps := func(from int) {
		for _, t := range tmps[from:] {
			os.Remove(t)
		}
	}
	for _, gf := range files {
		dst := filepath.Join(out, filepath.FromSlash(gf.Path))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			removeTmps(0)
			return err
		}
		// The name starts with a dot and does not end in .go: the go
		// command ignores it should it outlive a crash. It is short, not
		// derived from dst's: a name near the file system's limit (255
		// bytes) would not fit with a suffix.
		f, err := os.CreateTemp(filepath.Dir(dst), ".petrel-*.tmp")
		if err != nil {
			removeTmps(0)
			return fmt.Errorf("writing %s: %w", dst, err)
		}
		tmps, dsts = append(tmps, f.Name()), append(dsts, dst)
		_, err = f.Write(gf.Content)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Chmod(f.Name(), 0o644)
		}
		if err != nil {
			removeTmps(0)
			return fmt.Errorf("writing %s: %w", dst, err)
		}
	}
	for i := range tmps {
		if err := os.Rename(tmps[i], dsts[i]); err != nil {
			removeTmps(i)
			return err
		}
	}
	return nil
}

// writeNew writes a file that must not exist yet; if it does, it returns an
// error satisfying errors.Is(err, os.ErrExist) and changes nothing. If the
// file cannot be written whole, it is removed: a later run would leave a
// half-written file as it is.
func writeNew(p string, content []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(p)
		return fmt.Errorf("writing %s: %w", p, err)
	}
	return nil
}
