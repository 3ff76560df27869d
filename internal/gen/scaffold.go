package gen

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"sort"
	"strings"

	"github.com/petrel-rpc/petrel/idl/thrift"
)

// Scaffold returns the starting point of a server for service (a service of
// f, by its IDL name): main.go, a runnable server that listens on the
// address of its -addr flag, and handler.go, a handler whose methods return
// zero values and a not-implemented error. Both are package main, meant for
// the output directory whose import path is opt.Module, beside the packages
// Generate writes there. They are the user's to edit: callers must not
// overwrite existing files with them.
func Scaffold(f *thrift.File, service string, opt Options) ([]File, error) {
	if err := checkModule(opt.Module); err != nil {
		return nil, err
	}
	var svc *thrift.Service
	var names []string
	for _, d := range f.Decls {
		if s, ok := d.(*thrift.Service); ok {
			names = append(names, s.Name)
			if s.Name == service {
				svc = s
			}
		}
	}
	if svc == nil {
		if len(names) == 0 {
			return nil, &Error{Pos: thrift.Pos{File: f.Path}, Msg: fmt.Sprintf("no service %q: the file declares no service", service)}
		}
		return nil, &Error{Pos: thrift.Pos{File: f.Path}, Msg: fmt.Sprintf("no service %q; the file declares %s", service, strings.Join(names, ", "))}
	}
	g := newGenerator(opt)
	files := allFiles(f)
	for _, tf := range files {
		g.plan(tf)
		g.checkInheritance(tf)
	}
	if g.err != nil {
		return nil, g.err
	}
	for _, tf := range files {
		g.nameDecls(tf)
	}
	mainPkg := &pkgInfo{name: "main", importPath: strings.TrimSuffix(opt.Module, "/")}

	// handler.go
	hg := g.scaffoldFile(f, mainPkg)
	hg.imports["context"] = "context"
	hg.imports["errors"] = "errors"
	iface := hg.qual(svc)
	hg.p("// handler implements %s: fill in its methods.", iface)
	hg.p("type handler struct{}")
	hg.p("")
	hg.p("// The compiler checks that handler implements every method.")
	hg.p("var _ %s = (*handler)(nil)", iface)
	hg.p("")
	hg.p("// errNotImplemented is what the methods return until they are written.")
	hg.p("var errNotImplemented = errors.New(\"not implemented\")")
	hg.p("")
	for _, fn := range g.serviceMethods(svc) {
		ms := hg.sig(fn)
		hg.doc(fn.Doc)
		if fn.Doc == "" {
			hg.p("// %s implements %s.%s.", ms.name, fn.Service.Name, fn.Name)
		}
		hg.p("func (h *handler) %s(%s) %s {", ms.name, ms.paramList(false), ms.results())
		if ms.ret == "" {
			hg.p("return errNotImplemented")
		} else {
			hg.p("return r, errNotImplemented")
		}
		hg.p("}")
		hg.p("")
	}
	handlerSrc, err := hg.scaffoldSource(fmt.Sprintf("// The handler of service %s, written by petrel gen -service as a skeleton\n// to fill in; petrel gen never overwrites this file.\n", svc.Name), false)
	if err != nil {
		return nil, err
	}

	// main.go
	mg := g.scaffoldFile(f, mainPkg)
	for _, p := range []string{"context", "errors", "flag", "log", "net", "os", "os/signal", "syscall", "time"} {
		mg.imports[p] = p[strings.LastIndexByte(p, '/')+1:]
	}
	mg.imports[ServerImportPath] = "server"
	n := g.svcNames[svc]
	mg.p("func main() {")
	mg.p("addr := flag.String(\"addr\", \":8888\", \"address to listen on (host:port; port 0 picks a free one)\")")
	mg.p("flag.Parse()")
	mg.p("// Listen before saying anything: a port in use fails here, and the log")
	mg.p("// shows the port chosen for port 0.")
	mg.p("ln, err := net.Listen(\"tcp\", *addr)")
	mg.p("if err != nil {")
	mg.p("log.Fatal(err)")
	mg.p("}")
	mg.p("s := %s(new(handler), server.WithListener(ln))", mg.qualName(svc.File, n.newServer))
	mg.p("// Stop gracefully on SIGINT or SIGTERM: finish the calls in progress.")
	mg.p("sig := make(chan os.Signal, 1)")
	mg.p("signal.Notify(sig, os.Interrupt, syscall.SIGTERM)")
	mg.p("stopped := make(chan error, 1)")
	mg.p("go func() {")
	mg.p("<-sig")
	mg.p("ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)")
	mg.p("defer cancel()")
	mg.p("stopped <- s.Stop(ctx)")
	mg.p("}()")
	mg.p("log.Printf(\"serving %s on %%s\", ln.Addr())", svc.Name)
	mg.p("// Run returns once Stop has stopped accepting (ErrServerStopped if the")
	mg.p("// signal came before it started); Stop may still be closing")
	mg.p("// connections, so wait for it before exiting.")
	mg.p("if err := s.Run(); err != nil && !errors.Is(err, server.ErrServerStopped) {")
	mg.p("log.Fatal(err)")
	mg.p("}")
	mg.p("if err := <-stopped; err != nil {")
	mg.p("%s", `log.Fatalf("stop: %v", err)`)
	mg.p("}")
	mg.p("log.Print(\"stopped\")")
	mg.p("}")
	mainSrc, err := mg.scaffoldSource(fmt.Sprintf("// Command main serves service %s; written by petrel gen -service as a\n// starting point (petrel gen never overwrites this file). Run it with\n// -addr host:port.\n", svc.Name), true)
	if err != nil {
		return nil, err
	}
	if g.err != nil {
		return nil, g.err
	}
	return []File{{Path: "handler.go", Content: handlerSrc}, {Path: "main.go", Content: mainSrc}}, nil
}

// scaffoldFile returns a fileGen for a package main file beside the
// generated packages, whose local names imports and parameters avoid.
func (g *generator) scaffoldFile(f *thrift.File, pkg *pkgInfo) *fileGen {
	fg := &fileGen{g: g, f: f, pkg: pkg, buf: &bytes.Buffer{}, imports: map[string]string{}, aliases: reservedAliases()}
	fg.paramAvoid = map[string]bool{}
	for _, s := range []string{"flag", "log", "net", "os", "signal", "syscall", "time", "main", "handler", "errNotImplemented", "addr", "ln", "sig", "stopped", "cancel"} {
		fg.aliases[s] = true
		fg.paramAvoid[s] = true
	}
	return fg
}

// scaffoldSource puts the header, package clause and imports before the
// body written so far and formats the result.
func (fg *fileGen) scaffoldSource(header string, pkgDoc bool) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(header)
	if !pkgDoc {
		b.WriteByte('\n')
	}
	b.WriteString("package main\n\nimport (\n")
	// The generated packages are under the module, whose path may have no
	// dot; the standard library's have none.
	generated := strings.TrimSuffix(fg.g.opt.Module, "/") + "/"
	// Types are qualified while signatures are worked out, also those the
	// skeleton does not write (argument and result structs, exceptions), so
	// some imports may be unused, which Go refuses: keep only those the body
	// names (all of them if it does not parse: format.Source reports that).
	var used map[string]bool
	if af, err := parser.ParseFile(token.NewFileSet(), "", append([]byte("package main\n"), fg.buf.Bytes()...), 0); err == nil {
		used = map[string]bool{}
		ast.Inspect(af, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok {
					used[id.Name] = true
				}
			}
			return true
		})
	}
	var std, other []string
	for p, a := range fg.imports {
		if used != nil && !used[a] {
			continue
		}
		if strings.Contains(p, ".") || strings.HasPrefix(p, generated) {
			other = append(other, p)
		} else {
			std = append(std, p)
		}
	}
	sort.Strings(std)
	sort.Strings(other)
	// This file is in the module's root directory.
	for _, p := range other {
		if root, ok := mayImport(strings.TrimSuffix(generated, "/"), p); !ok {
			return nil, &Error{Pos: thrift.Pos{File: fg.f.Path}, Msg: fmt.Sprintf("the skeleton (package main in %s) would import %s for %s, which Go does not allow: only %s and the packages below it may import it, and the skeleton is not among them; change the namespace go so that its only internal element, if it has one, is its first", strings.TrimSuffix(generated, "/"), p, describeFile(fg.deps[p]), root)}
		}
	}
	writeImport := func(p string) {
		a := fg.imports[p]
		if a == p[strings.LastIndexByte(p, '/')+1:] {
			fmt.Fprintf(&b, "\t%q\n", p)
		} else {
			fmt.Fprintf(&b, "\t%s %q\n", a, p)
		}
	}
	for _, p := range std {
		writeImport(p)
	}
	if len(std) > 0 && len(other) > 0 {
		b.WriteByte('\n')
	}
	for _, p := range other {
		writeImport(p)
	}
	b.WriteString(")\n\n")
	b.Write(fg.buf.Bytes())
	out, err := format.Source(b.Bytes())
	if err != nil {
		return nil, &Error{Pos: thrift.Pos{File: fg.f.Path}, Msg: fmt.Sprintf("generated Go does not parse (a generator bug): %v\n%s", err, numbered(b.Bytes()))}
	}
	return out, nil
}
