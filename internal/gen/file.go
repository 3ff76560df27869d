package gen

import (
	"bytes"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/petrel-rpc/petrel/idl/thrift"
)

// fileGen writes the Go file of one Thrift file.
type fileGen struct {
	g   *generator
	f   *thrift.File
	pkg *pkgInfo
	buf *bytes.Buffer
	// imports maps an import path to its alias in this file.
	imports map[string]string
	// deps maps the import path of each generated package this file
	// imports to the Thrift file it was first imported for (for errors).
	deps    map[string]*thrift.File
	aliases map[string]bool
	tmp     int // counter for unique local names
	// chunks is the body of the file so far, in order.
	chunks []chunk
	// slot, when not "", is where readValue puts the next struct it reads
	// (an element of a preallocated array) instead of allocating it.
	slot string
	// slotReset says the slot may hold an earlier value: reset it first.
	slotReset bool
	// field names the field being read, for errors ("" outside fields).
	field string
	// nocopy makes writeValue emit the *Nocopy writers (FastWriteNocopy).
	nocopy bool
	// emitted counts the bytes of code written, captured text included
	// (see grew).
	emitted int
	// paramAvoid are names (beyond imports, keywords and predeclared ones)
	// that method parameters must not take: package-level names the
	// method bodies use.
	paramAvoid map[string]bool
}

// chunk is a run of top-level declarations. Declarations whose layout
// gofmt would change (aligned fields, composite literals) are formatted with
// go/format; the codec methods, which are most of the output, are written
// in gofmt's layout directly (raw) and only indented, which keeps the
// generator fast on large IDL. Tests check that the result is a fixed
// point of gofmt.
type chunk struct {
	text string
	raw  bool
}

// cut ends the current chunk.
func (fg *fileGen) cut(raw bool) {
	if fg.buf.Len() > 0 {
		fg.chunks = append(fg.chunks, chunk{text: fg.buf.String(), raw: raw})
		fg.buf = &bytes.Buffer{}
	}
}

func (g *generator) newFileGen(f *thrift.File) *fileGen {
	return &fileGen{
		g:   g,
		f:   f,
		pkg: g.pkgs[f],
		buf: &bytes.Buffer{},
		imports: map[string]string{
			CodecImportPath: "thrift",
			"fmt":           "fmt",
		},
		aliases: reservedAliases(),
	}
}

// p writes one line of code.
func (fg *fileGen) p(format string, args ...any) {
	n := fg.buf.Len()
	if len(args) == 0 {
		fg.buf.WriteString(format)
	} else {
		fmt.Fprintf(fg.buf, format, args...)
	}
	fg.buf.WriteByte('\n')
	fg.grew(fg.buf.Len() - n)
}

// write writes code made earlier (captured).
func (fg *fileGen) write(code string) {
	fg.buf.WriteString(code)
	fg.grew(len(code))
}

// maxOutput bounds the code generated for one Thrift file. Nested
// container types are written out in full at each use, so IDL such as
// typedefs of maps of the previous typedef doubles the code per level, and
// so are the values of constants a constant refers to ([C, C] doubles it):
// without a bound, two dozen lines of IDL would exhaust memory.
const maxOutput = 64 << 20

// tooLarge is the panic by which grew abandons a declaration whose code
// passes maxOutput; generate turns it into an error at the declaration.
type tooLarge struct{}

// grew counts n more bytes of generated code.
func (fg *fileGen) grew(n int) {
	fg.emitted += n
	if fg.emitted > maxOutput {
		panic(tooLarge{})
	}
}

// building checks code of n bytes being built before it is written (a
// constant's value, in which every constant it refers to is written out
// in full): it abandons the declaration as grew would once n bytes more
// would pass maxOutput, so that such code is never built much past it.
func (fg *fileGen) building(n int) {
	if fg.emitted+n > maxOutput {
		panic(tooLarge{})
	}
}

// capture runs fn and returns what it wrote instead of writing it.
func (fg *fileGen) capture(fn func()) string {
	old := fg.buf
	fg.buf = &bytes.Buffer{}
	fn()
	s := fg.buf.String()
	fg.buf = old
	return s
}

// local returns a fresh local identifier starting with base.
func (fg *fileGen) local(base string) string {
	fg.tmp++
	return base + strconv.Itoa(fg.tmp)
}

// reservedAliases returns the identifiers an import alias must not take:
// the packages every file imports and the local names generated methods use
// (locals with a numeric suffix cannot clash: aliases never end in a digit
// unless suffixed "pkgN").
func reservedAliases() map[string]bool {
	m := map[string]bool{}
	for _, s := range []string{"thrift", "fmt", "b", "p", "w", "t", "id", "n", "err", "off",
		"depth", "l", "last", "bv", "hb", "fstart", "vstart", "s", "v", "k", "et", "kt", "vt",
		"size", "text",
		// Go's predeclared identifiers: generated code calls len, min,
		// make, append... and names int32, float64... (an import of that
		// name would hide them in the file).
		"any", "bool", "byte", "comparable", "complex64", "complex128", "error", "float32",
		"float64", "int", "int8", "int16", "int32", "int64", "rune", "string", "uint", "uint8",
		"uint16", "uint32", "uint64", "uintptr", "true", "false", "iota", "nil", "append",
		"cap", "clear", "close", "complex", "copy", "delete", "imag", "len", "make", "max",
		"min", "new", "panic", "print", "println", "real", "recover",
		// FastReadDepth's block of optional values and its type.
		"opt", "optionals",
		// The service glue's imports and locals.
		"context", "errors", "client", "server", "ctx", "opts", "handler", "args", "result",
		"h", "a", "r", "e", "ok", "ret", "x", "c", "call"} {
		m[s] = true
	}
	return m
}

// importAlias returns the alias of package p in this file, adding the
// import for a declaration of f (a file of p).
func (fg *fileGen) importAlias(p *pkgInfo, f *thrift.File) string {
	if a, ok := fg.imports[p.importPath]; ok {
		return a
	}
	if fg.deps == nil {
		fg.deps = map[string]*thrift.File{}
	}
	fg.deps[p.importPath] = f
	a := p.name
	if c := a[len(a)-1]; c >= '0' && c <= '9' {
		a += "pkg" // generated locals are letters followed by digits
	}
	for i := 1; fg.aliases[a] || isGoKeyword(a) || fg.g.scopes[fg.pkg.importPath][a]; i++ {
		a = p.name + "pkg"
		if i > 1 {
			a += strconv.Itoa(i)
		}
	}
	fg.aliases[a] = true
	fg.imports[p.importPath] = a
	return a
}

// stdAlias returns the alias of standard library package path (whose
// name is name) in this file, adding the import; the alias avoids the
// names importAlias avoids and the aliases already taken.
func (fg *fileGen) stdAlias(path, name string) string {
	if a, ok := fg.imports[path]; ok {
		return a
	}
	a := name
	for i := 1; fg.aliases[a] || isGoKeyword(a) || fg.g.scopes[fg.pkg.importPath][a]; i++ {
		a = name + "pkg"
		if i > 1 {
			a += strconv.Itoa(i)
		}
	}
	fg.aliases[a] = true
	fg.imports[path] = a
	return a
}

// doc writes a doc comment.
func (fg *fileGen) doc(s string) {
	s = strings.TrimSpace(cleanDoc(s))
	if s == "" {
		return
	}
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimRight(l, " \t\r")
		if l == "" {
			fg.p("//")
		} else {
			fg.p("// %s", l)
		}
	}
}

// cleanDoc returns IDL comment text s made fit for Go comments, which may
// not hold NUL bytes, byte order marks or invalid UTF-8: those, and the
// other control characters but tab and newline, become U+FFFD; a carriage
// return ends a line.
func cleanDoc(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r == '\r':
			return '\n'
		case r < 0x20 || r == 0x7f || r == '\ufeff':
			return utf8.RuneError
		}
		return r // an invalid byte arrives as utf8.RuneError and is written as U+FFFD
	}, s)
}

// generate fills fg.chunks with the file: a header chunk, then the
// declarations.
func (fg *fileGen) generate() {
	for _, d := range fg.f.Decls {
		if !fg.genDecl(d) {
			return
		}
		fg.cut(false)
	}
	body := fg.chunks
	var out bytes.Buffer
	out.WriteString("// Code generated by petrel. DO NOT EDIT.\n")
	src := path.Base(strings.ReplaceAll(fg.f.Path, "\\", "/"))
	out.WriteString("// Source: " + strings.ReplaceAll(cleanDoc(src), "\n", " ") + "\n\n")
	if d := strings.TrimSpace(cleanDoc(fg.f.Doc)); d != "" {
		for _, l := range strings.Split(d, "\n") {
			out.WriteString(strings.TrimRight("// "+l, " ") + "\n")
		}
	}
	fmt.Fprintf(&out, "package %s\n\n", fg.pkg.name)
	paths := make([]string, 0, len(fg.imports))
	for p := range fg.imports {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	out.WriteString("import (\n")
	for _, p := range paths {
		fmt.Fprintf(&out, "\t%s %q\n", fg.imports[p], p)
	}
	out.WriteString(")\n\n")
	// Keep every import used, whatever the file declares (context: a
	// service without methods).
	out.WriteString("var (\n\t_ = fmt.Sprintf\n\t_ = thrift.STOP\n")
	if _, ok := fg.imports["context"]; ok {
		out.WriteString("\t_ = context.Background\n")
	}
	out.WriteString(")\n")
	fg.chunks = append([]chunk{{text: out.String()}}, body...)
}

// genDecl generates one declaration; it reports false, with the
// generator's error set, when its code would pass maxOutput.
func (fg *fileGen) genDecl(d thrift.Decl) (ok bool) {
	before := fg.emitted
	defer func() {
		if r := recover(); r != nil {
			if _, big := r.(tooLarge); !big {
				panic(r)
			}
			if svc, isService := d.(*thrift.Service); isService {
				fg.g.fail(d.DeclPos(), "the Go code generated for service %s passes %d MiB (with the declarations before it): it has %d methods, its own and inherited ones, each repeated in its method table, handlers and client, and nested container types in their arguments and results are written out in full at every use; spread the services over several files, shorten the extends chain or give the inner containers struct types", svc.Name, maxOutput>>20, len(fg.g.serviceMethods(svc)))
			} else if _, isConst := d.(*thrift.Const); isConst {
				fg.g.fail(d.DeclPos(), "the Go code generated for constant %s passes %d MiB: the values of the constants it refers to are written out in full at every use (so are nested container types); refer to fewer constants in it", d.DeclName(), maxOutput>>20)
			} else if before >= maxOutput-maxOutput/16 {
				// Nearly all of the code came before this declaration: the
				// file is too large, whatever this declaration holds.
				fg.g.fail(d.DeclPos(), "the Go code generated for this file passes %d MiB at %s (%d MiB of it for the declarations before it); split the file into several", maxOutput>>20, d.DeclName(), before>>20)
			} else {
				fg.g.fail(d.DeclPos(), "the Go code generated for %s passes %d MiB: its nested container types (and the constants its default values refer to) are written out in full at every use; give the inner containers struct types", d.DeclName(), maxOutput>>20)
			}
			ok = false
		}
	}()
	switch d := d.(type) {
	case *thrift.Typedef:
		fg.genTypedef(d)
	case *thrift.Const:
		fg.genConst(d)
	case *thrift.Enum:
		fg.genEnum(d)
	case *thrift.Struct:
		fg.genStruct(d)
	case *thrift.Service:
		fg.genService(d)
	}
	return true
}

// indentRaw lays out a raw chunk as gofmt would: one statement per line
// (one-line blocks such as `if c { s }` are split), tab-indented by brace
// depth, case labels one level out.
func indentRaw(src string) string {
	var out strings.Builder
	out.Grow(len(src) + len(src)/4)
	depth := 0
	emit := func(l string) {
		if l == "" {
			out.WriteByte('\n')
			return
		}
		if l[0] == '}' {
			depth--
		}
		d := depth
		if strings.HasPrefix(l, "case ") || l == "default:" {
			d--
		}
		for i := 0; i < d; i++ {
			out.WriteByte('\t')
		}
		out.WriteString(l)
		out.WriteByte('\n')
		if l[len(l)-1] == '{' {
			depth++
		}
	}
	for len(src) > 0 {
		var line string
		if i := strings.IndexByte(src, '\n'); i >= 0 {
			line, src = src[:i], src[i+1:]
		} else {
			line, src = src, ""
		}
		line = strings.TrimSpace(line)
		if head, body, ok := splitOneLiner(line); ok {
			emit(head)
			emit(body)
			emit("}")
			continue
		}
		emit(line)
	}
	return out.String()
}

// splitOneLiner splits `if c { s }`, `for c { s }` and `func f() { s }`
// into the block opener and the statement.
func splitOneLiner(l string) (head, body string, ok bool) {
	if !strings.HasSuffix(l, " }") || !(strings.HasPrefix(l, "if ") || strings.HasPrefix(l, "for ") || strings.HasPrefix(l, "func ")) {
		return "", "", false
	}
	i := strings.Index(l, " { ")
	if i < 0 {
		return "", "", false
	}
	return l[:i+2], l[i+3 : len(l)-2], true
}
