package gen

import (
	"bytes"
	"fmt"
	"go/format"
	"path"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/petrel-rpc/petrel/idl/thrift"
)

// CodecImportPath is the import path of the runtime package generated code
// calls.
const CodecImportPath = "github.com/petrel-rpc/petrel/codec/thrift"

// Options control generation.
type Options struct {
	// Module is the Go import path of the output directory. Generated
	// packages that refer to each other import Module + "/" + their
	// directory. Required, and it must be a valid Go import path (ASCII
	// letters, digits and - . _ ~ + in slash-separated elements).
	Module string
	// KeepUnknown makes every struct keep the fields it does not know (their
	// bytes, in unexported fields, in both protocols) when reading, and
	// write them back in whichever protocol a writer uses. Without it
	// unknown fields are skipped.
	KeepUnknown bool
}

// File is one generated Go source file.
type File struct {
	// Path is relative to the output directory, slash-separated
	// ("example/hello/hello.go").
	Path string
	// Content is gofmt-formatted Go source.
	Content []byte
}

// Error is a generation failure tied to a place in the IDL.
type Error struct {
	Pos thrift.Pos
	Msg string
}

// Error returns "file:line:col: message" ("file: message" when Pos has no
// line, "gen: message" when it has no file).
func (e *Error) Error() string {
	if e.Pos.File == "" {
		return "gen: " + e.Msg
	}
	return e.Pos.String() + ": " + e.Msg
}

// Generate returns the Go files for f and for every file it includes,
// directly or not, in a stable order.
func Generate(f *thrift.File, opt Options) ([]File, error) {
	if err := checkModule(opt.Module); err != nil {
		return nil, err
	}
	g := newGenerator(opt)
	files := allFiles(f)
	// Every Go file and every directory above one, by lower-cased path: the
	// go command refuses two import paths, and module zips two files or
	// directories, that differ only in case, and on macOS or Windows one
	// would overwrite (or merge with) the other.
	type placed struct {
		path, goFile string
		tf           *thrift.File
	}
	seen := map[string]placed{}
	for _, tf := range files {
		g.plan(tf)
		p := path.Join(g.pkgs[tf].dir, goFileName(tf.Name))
		for q := p; q != "."; q = path.Dir(q) {
			prev, ok := seen[strings.ToLower(q)]
			switch {
			case !ok:
				seen[strings.ToLower(q)] = placed{q, p, tf}
				continue
			case prev.path != q:
				other := ""
				if q == p {
					other = " (or another file name)"
				}
				return nil, &Error{Msg: fmt.Sprintf("%s generates %s and %s generates %s, and %s differs only in case from %s, which the go command refuses (in import paths and module zips) and macOS and Windows take for one: give one of them another namespace go%s", describeFile(prev.tf), prev.goFile, describeFile(tf), p, q, prev.path, other)}
			case q == p:
				return nil, &Error{Msg: fmt.Sprintf("%s and %s both generate the Go file %s: give one of them another namespace go (or another file name)", describeFile(prev.tf), describeFile(tf), p)}
			}
			break // a directory already seen, and so are those above it
		}
	}
	for _, tf := range files {
		g.checkInheritance(tf)
	}
	if g.err != nil {
		return nil, g.err
	}
	for _, tf := range files {
		g.nameDecls(tf)
	}
	gens := make([]*fileGen, len(files))
	for i, tf := range files {
		gens[i] = g.newFileGen(tf)
		gens[i].generate()
		if g.err != nil {
			return nil, g.err
		}
	}
	if err := checkImports(gens); err != nil {
		return nil, err
	}
	if err := formatChunks(gens); err != nil {
		return nil, err
	}
	var out []File
	for _, fg := range gens {
		var b bytes.Buffer
		for i, c := range fg.chunks {
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(strings.TrimRight(c.text, "\n"))
			b.WriteByte('\n')
		}
		out = append(out, File{Path: path.Join(fg.pkg.dir, goFileName(fg.f.Name)), Content: b.Bytes()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// describeFile names a Thrift file and its namespace go, for errors.
func describeFile(f *thrift.File) string {
	if ns := f.Namespace("go"); ns != "" {
		return fmt.Sprintf("%s (namespace go %s)", f.Path, ns)
	}
	return f.Path + " (no namespace go)"
}

// checkImports reports the imports between generated packages that Go
// refuses: of an internal package from outside the tree allowed to import
// it (mayImport), and import cycles (a file including, directly or not, a
// file of another namespace that includes a file of the first one's).
func checkImports(gens []*fileGen) error {
	// deps[p][q] is the first file of package p that imports q and the
	// file of q it uses.
	type use struct{ from, to *thrift.File }
	deps := map[string]map[string]use{}
	var pkgs []string
	for _, fg := range gens {
		p := fg.pkg.importPath
		if deps[p] == nil {
			deps[p] = map[string]use{}
			pkgs = append(pkgs, p)
		}
		for _, q := range sortedKeys(fg.deps) {
			if root, ok := mayImport(p, q); !ok {
				return &Error{Pos: thrift.Pos{File: fg.f.Path}, Msg: fmt.Sprintf("the Go package of %s, %s, would import %s for %s, which Go does not allow: only %s and the packages below it may import it; change one of the namespaces go so that the importing package is among those, or the imported one is below no internal directory", describeFile(fg.f), p, q, describeFile(fg.deps[q]), root)}
			}
			if _, ok := deps[p][q]; !ok {
				deps[p][q] = use{fg.f, fg.deps[q]}
			}
		}
	}
	const (
		unseen = iota
		open   // on the path being walked
		done
	)
	state := map[string]int{}
	var stack []string
	// walk returns a cycle through p's imports (its first package
	// repeated at its end), if there is one.
	var walk func(p string) []string
	walk = func(p string) []string {
		state[p] = open
		stack = append(stack, p)
		for _, q := range sortedKeys(deps[p]) {
			switch state[q] {
			case open:
				i := len(stack) - 1
				for stack[i] != q {
					i--
				}
				return append(append([]string(nil), stack[i:]...), q)
			case unseen:
				if cycle := walk(q); cycle != nil {
					return cycle
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[p] = done
		return nil
	}
	for _, p := range pkgs {
		if state[p] != unseen {
			continue
		}
		cycle := walk(p)
		if cycle == nil {
			continue
		}
		var steps []string
		for i := 0; i+1 < len(cycle); i++ {
			u := deps[cycle[i]][cycle[i+1]]
			steps = append(steps, fmt.Sprintf("%s, in package %s, uses %s, in package %s", describeFile(u.from), cycle[i], describeFile(u.to), cycle[i+1]))
		}
		return &Error{Msg: "the generated Go packages would import each other in a cycle, which Go does not allow: " + strings.Join(steps, "; ") + "; give one of these files another namespace go"}
	}
	return nil
}

// mayImport reports whether the package at import path from may import the
// one at import path to by Go's rule on internal packages: only the tree
// rooted at the parent of to's last internal element (root) may.
func mayImport(from, to string) (root string, ok bool) {
	i := strings.LastIndex("/"+to+"/", "/internal/")
	if i <= 0 {
		return "", true // no internal element, or it begins the path
	}
	root = to[:i-1]
	return root, from == root || strings.HasPrefix(from, root+"/")
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// checkModule reports whether m (Options.Module) can begin the import paths
// of generated packages: slash-separated elements (one trailing slash is
// dropped), none empty, "." or ".." or ending in a dot or a Windows device
// name, made of ASCII letters, digits and - . _ ~ +, as the go command
// requires of import paths.
func checkModule(m string) error {
	if m == "" {
		return &Error{Msg: "Options.Module (the import path of the output directory) is empty"}
	}
	bad := func(why string) error {
		return &Error{Msg: fmt.Sprintf("module %q (Options.Module, the -module of petrel gen) is not a valid Go import path: %s", m, why)}
	}
	for _, elem := range strings.Split(strings.TrimSuffix(m, "/"), "/") {
		switch {
		case elem == "":
			return bad("it has an empty element (a leading slash or two slashes in a row)")
		case elem == "." || elem == "..":
			return bad("it has a " + elem + " element")
		case elem[len(elem)-1] == '.':
			return bad("element " + strconv.Quote(elem) + " ends in a dot")
		case windowsDevice(elem):
			return bad("element " + strconv.Quote(elem) + " is a Windows device name (con, prn, aux, nul, com1-9, lpt1-9), which the go command refuses")
		case elem == "vendor":
			return bad("it has a vendor element: the go command takes the packages below one for vendored copies, which no package outside may import")
		}
		for _, r := range elem {
			ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~+", r)
			if !ok {
				return bad(fmt.Sprintf("%q is not allowed (only ASCII letters, digits and - . _ ~ + are)", r))
			}
		}
	}
	return nil
}

// formatChunks formats every chunk of every file in place, in parallel:
// gofmt for ordinary chunks, indentRaw for raw ones.
func formatChunks(gens []*fileGen) error {
	type job struct {
		fg *fileGen
		i  int
	}
	jobs := make(chan job)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				c := &j.fg.chunks[j.i]
				if c.raw {
					c.text = indentRaw(c.text)
					continue
				}
				b, err := format.Source([]byte(c.text))
				if err != nil {
					select {
					case errs <- &Error{Pos: thrift.Pos{File: j.fg.f.Path}, Msg: fmt.Sprintf("generated Go does not parse (a generator bug): %v\n%s", err, numbered([]byte(c.text)))}:
					default:
					}
					continue
				}
				c.text = string(b)
			}
		}()
	}
	for _, fg := range gens {
		for i := range fg.chunks {
			jobs <- job{fg, i}
		}
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// numbered returns src with line numbers, for bug reports.
func numbered(src []byte) string {
	var b strings.Builder
	for i, l := range strings.Split(string(src), "\n") {
		fmt.Fprintf(&b, "%5d  %s\n", i+1, l)
	}
	return b.String()
}

// allFiles returns f and its transitive includes, includes first, each once.
func allFiles(f *thrift.File) []*thrift.File {
	var out []*thrift.File
	seen := map[*thrift.File]bool{}
	var walk func(*thrift.File)
	walk = func(f *thrift.File) {
		if f == nil || seen[f] {
			return
		}
		seen[f] = true
		for _, inc := range f.Includes {
			walk(inc.File)
		}
		out = append(out, f)
	}
	walk(f)
	return out
}

// pkgInfo says where a Thrift file's Go package goes.
type pkgInfo struct {
	dir        string // relative to the output directory, slash-separated
	name       string // Go package name
	importPath string
}

type generator struct {
	opt  Options
	pkgs map[*thrift.File]*pkgInfo
	// names holds the Go identifier of every declaration (thrift.Decl), enum
	// value (*thrift.EnumValue) and derived name, keyed by node.
	names map[any]string
	// scopes holds the identifiers taken in each Go package (by import path).
	scopes map[string]map[string]bool
	// synth holds the argument and result structs of service functions.
	synth map[*thrift.Function]svcStructs
	// svcNames holds the identifiers generated for each service.
	svcNames map[*thrift.Service]svcNames
	// methods caches serviceMethods, methodCounts methodCount.
	methods      map[*thrift.Service][]*thrift.Function
	methodCounts map[*thrift.Service]int
	// stringy caches hasStrings.
	stringy map[*thrift.Struct]bool
	// unionish caches hasUnions (for structs that are not unions), and
	// typeUnionish typeHasUnions.
	unionish     map[*thrift.Struct]bool
	typeUnionish map[*thrift.Type]bool
	// fieldNames caches the Go names of each struct's fields.
	fieldNames map[*thrift.Struct]map[*thrift.Field]string
	err        error
}

func newGenerator(opt Options) *generator {
	return &generator{
		opt:          opt,
		pkgs:         map[*thrift.File]*pkgInfo{},
		names:        map[any]string{},
		scopes:       map[string]map[string]bool{},
		synth:        map[*thrift.Function]svcStructs{},
		svcNames:     map[*thrift.Service]svcNames{},
		methods:      map[*thrift.Service][]*thrift.Function{},
		methodCounts: map[*thrift.Service]int{},
		stringy:      map[*thrift.Struct]bool{},
		unionish:     map[*thrift.Struct]bool{},
		typeUnionish: map[*thrift.Type]bool{},
		fieldNames:   map[*thrift.Struct]map[*thrift.Field]string{},
	}
}

func (g *generator) fail(pos thrift.Pos, format string, args ...any) {
	if g.err == nil {
		g.err = &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
	}
}

// plan decides the package of f: its go namespace ("a.b.c" goes to
// directory a/b/c, package c), else its base name. A Windows device name
// (aux, con, nul, ...) gets a "_" (directory and package aux_); so does a
// package name no file could import (a keyword, _, main or init: package
// init_ in directory init).
func (g *generator) plan(f *thrift.File) {
	ns := f.Namespace("go")
	var segs []string
	if ns != "" {
		for _, s := range strings.FieldsFunc(ns, func(r rune) bool { return r == '.' || r == '/' }) {
			segs = append(segs, pathSegment(s))
		}
	}
	if len(segs) == 0 {
		segs = []string{pathSegment(strings.ToLower(f.Name))}
	}
	name := segs[len(segs)-1]
	if isGoKeyword(name) || name == "_" || name == "main" || name == "init" {
		name += "_"
	}
	dir := strings.Join(segs, "/")
	g.pkgs[f] = &pkgInfo{dir: dir, name: name, importPath: strings.TrimSuffix(g.opt.Module, "/") + "/" + dir}
}

// pathSegment makes s a directory name of a generated package: a valid Go
// identifier (sanitizeIdent) that is not a Windows device name, which the go
// command refuses in import paths on every platform (aux becomes aux_), nor
// vendor, below which it takes packages for vendored copies that no package
// outside may import (vendor becomes vendor_).
func pathSegment(s string) string {
	s = sanitizeIdent(s)
	if windowsDevice(s) || s == "vendor" {
		s += "_"
	}
	return s
}

// windowsDevice reports whether a path element is, before its first dot,
// one of the names Windows reserves for devices (in any case): the go
// command refuses such elements in import paths and module file names.
func windowsDevice(elem string) bool {
	short, _, _ := strings.Cut(elem, ".")
	switch strings.ToUpper(short) {
	case "CON", "PRN", "AUX", "NUL":
		return true
	}
	if len(short) == 4 && short[3] >= '1' && short[3] <= '9' {
		switch strings.ToUpper(short[:3]) {
		case "COM", "LPT":
			return true
		}
	}
	return false
}

// sanitizeIdent makes s a valid Go identifier by replacing what is not a
// letter, digit or underscore, and prefixing a leading digit.
func sanitizeIdent(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			b.WriteRune(r)
		case r >= '0' && r <= '9':
			if i == 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}

var goKeywords = map[string]bool{
	"break": true, "case": true, "chan": true, "const": true, "continue": true,
	"default": true, "defer": true, "else": true, "fallthrough": true, "for": true,
	"func": true, "go": true, "goto": true, "if": true, "import": true,
	"interface": true, "map": true, "package": true, "range": true, "return": true,
	"select": true, "struct": true, "switch": true, "type": true, "var": true,
}

func isGoKeyword(s string) bool { return goKeywords[s] }

// goFileName returns the Go file name for a Thrift file's include name,
// avoiding names Go would treat as test files or build-constrained or
// ignore (a leading "_", which sanitizeIdent also gives a name starting
// with a digit), and Windows device names, which module zips may not hold.
func goFileName(name string) string {
	base := sanitizeIdent(name)
	if strings.HasPrefix(base, "_") {
		base = "x" + base
	}
	if i := strings.LastIndexByte(base, '_'); (i >= 0 && specialSuffix[strings.ToLower(base[i+1:])]) || windowsDevice(base) {
		base += "_gen"
	}
	return base + ".go"
}

// specialSuffix holds "test" and the GOOS and GOARCH values the go command
// knows, past and future ones too (its internal/syslist): a file name
// ending in _<one of them> is built only there.
var specialSuffix = map[string]bool{
	"test": true, "aix": true, "android": true, "darwin": true, "dragonfly": true, "freebsd": true,
	"hurd": true, "illumos": true, "ios": true, "js": true, "linux": true, "nacl": true,
	"netbsd": true, "openbsd": true, "plan9": true, "solaris": true, "wasip1": true,
	"windows": true, "zos": true,
	"386": true, "amd64": true, "amd64p32": true, "arm": true, "armbe": true,
	"arm64": true, "arm64be": true, "loong64": true, "mips": true, "mipsle": true,
	"mips64": true, "mips64le": true, "mips64p32": true, "mips64p32le": true,
	"ppc": true, "ppc64": true, "ppc64le": true, "riscv": true, "riscv64": true,
	"s390": true, "s390x": true, "sparc": true, "sparc64": true, "wasm": true,
}

// claim takes name in package scope pkg, appending "_" until it is free.
func (g *generator) claim(pkg, name string) string {
	s := g.scopes[pkg]
	if s == nil {
		s = map[string]bool{}
		g.scopes[pkg] = s
	}
	for s[name] || isGoKeyword(name) {
		name += "_"
	}
	s[name] = true
	return name
}

// nameDecls gives every declaration of f its Go identifier, and reserves
// the identifiers generated beside it (constructors, enum members...).
func (g *generator) nameDecls(f *thrift.File) {
	pkg := g.pkgs[f].importPath
	// Types first, so that they keep their natural names.
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *thrift.Struct, *thrift.Enum, *thrift.Typedef:
			g.names[d] = g.claim(pkg, thrift.GoName(d.DeclName()))
		}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *thrift.Const:
			g.names[d] = g.claim(pkg, thrift.GoName(d.Name))
		case *thrift.Enum:
			en := g.names[d]
			for _, v := range d.Values {
				g.names[v] = g.claim(pkg, en+"_"+sanitizeIdent(v.Name))
			}
			g.names[key{d, "FromString"}] = g.claim(pkg, en+"FromString")
		case *thrift.Struct:
			g.names[key{d, "New"}] = g.claim(pkg, "New"+g.names[d])
			g.nameFieldDefaults(pkg, d)
		case *thrift.Service:
			g.nameService(pkg, d)
		}
	}
}

// nameFieldDefaults names the <Struct>_<Field>_DEFAULT variables of s.
func (g *generator) nameFieldDefaults(pkg string, s *thrift.Struct) {
	for _, fl := range s.Fields {
		if needsDefaultVar(s, fl) {
			g.names[key{fl, "DEFAULT"}] = g.claim(pkg, g.names[s]+"_"+g.fieldGoName(s, fl)+"_DEFAULT")
		}
	}
}

// svcStructs are the argument and result structs of one service function.
type svcStructs struct {
	args   *thrift.Struct
	result *thrift.Struct // nil for oneway functions
}

// serviceStructs returns (building once) the structs that carry the
// arguments and the result of fn: <Service><Method>Args with the declared
// arguments, and <Service><Method>Result with Success (id 0, absent for
// void functions) and one optional field per declared exception.
func (g *generator) serviceStructs(fn *thrift.Function) svcStructs {
	if ss, ok := g.synth[fn]; ok {
		return ss
	}
	f := fn.Service.File
	ss := svcStructs{args: &thrift.Struct{
		Pos:  fn.Pos,
		Doc:  thrift.GoName(fn.Service.Name) + thrift.GoName(fn.Name) + "Args holds the arguments of " + fn.Service.Name + "." + fn.Name + ".",
		Kind: thrift.StructKindStruct,
		Name: fn.Service.Name + "_" + fn.Name + "_args",
		File: f,
	}}
	ss.args.Fields = fn.Args
	if !fn.Oneway {
		ss.result = &thrift.Struct{
			Pos:  fn.Pos,
			Doc:  thrift.GoName(fn.Service.Name) + thrift.GoName(fn.Name) + "Result holds the result of " + fn.Service.Name + "." + fn.Name + ": Success or one of the declared exceptions.",
			Kind: thrift.StructKindStruct,
			Name: fn.Service.Name + "_" + fn.Name + "_result",
			File: f,
		}
		if fn.Result != nil {
			ss.result.Fields = append(ss.result.Fields, &thrift.Field{Pos: fn.Pos, ID: 0, ExplicitID: true, Name: "success", Type: fn.Result, Required: thrift.Optional})
		}
		for _, ex := range fn.Throws {
			c := *ex
			c.Required = thrift.Optional
			ss.result.Fields = append(ss.result.Fields, &c)
		}
	}
	g.synth[fn] = ss
	return ss
}

// key names a derived identifier of a node.
type key struct {
	node any
	what string
}

// needsDefaultVar reports whether field fl of s gets a package-level
// <Struct>_<Field>_DEFAULT variable (what its getter returns when unset).
func needsDefaultVar(s *thrift.Struct, fl *thrift.Field) bool {
	return fieldOptional(s, fl) || isNilable(fl.Type)
}

// fieldOptional reports whether the field is optional (union fields always
// are).
func fieldOptional(s *thrift.Struct, fl *thrift.Field) bool {
	return s.Kind == thrift.StructKindUnion || fl.Required == thrift.Optional
}
