package gen

import (
	"path"
	"strconv"
	"strings"

	"github.com/petrel-rpc/petrel/idl/thrift"
)

// Import paths of the runtime packages the service glue uses.
const (
	// ClientImportPath is the import path of Petrel's RPC client.
	ClientImportPath = "github.com/petrel-rpc/petrel/client"
	// ServerImportPath is the import path of Petrel's RPC server.
	ServerImportPath = "github.com/petrel-rpc/petrel/server"
)

// svcNames are the Go identifiers generated for one service.
type svcNames struct {
	iface      string // the handler interface, <Service>
	client     string // the client interface, <Service>Client
	clientImpl string // its unexported implementation
	newClient  string // New<Service>Client
	clientFrom string // New<Service>ClientFrom
	newServer  string // New<Service>Server
	register   string // Register<Service>Service
	info       string // <Service>ServiceInfo
}

// nameService claims the identifiers of service svc in package pkg.
func (g *generator) nameService(pkg string, svc *thrift.Service) {
	sn := thrift.GoName(svc.Name)
	low := lowerFirst(sn)
	n := svcNames{
		iface:      g.claim(pkg, sn),
		client:     g.claim(pkg, sn+"Client"),
		clientImpl: g.claim(pkg, low+"Client"),
		newClient:  g.claim(pkg, "New"+sn+"Client"),
		clientFrom: g.claim(pkg, "New"+sn+"ClientFrom"),
		newServer:  g.claim(pkg, "New"+sn+"Server"),
		register:   g.claim(pkg, "Register"+sn+"Service"),
		info:       g.claim(pkg, sn+"ServiceInfo"),
	}
	g.names[svc] = n.iface
	g.names[key{svc, "ServiceInfo"}] = n.info
	g.svcNames[svc] = n
	for _, fn := range svc.Functions {
		m := sn + thrift.GoName(fn.Name)
		ss := g.serviceStructs(fn)
		g.names[ss.args] = g.claim(pkg, m+"Args")
		g.names[key{ss.args, "New"}] = g.claim(pkg, "New"+g.names[ss.args])
		g.nameFieldDefaults(pkg, ss.args)
		if ss.result != nil {
			g.names[ss.result] = g.claim(pkg, m+"Result")
			g.names[key{ss.result, "New"}] = g.claim(pkg, "New"+g.names[ss.result])
			g.nameFieldDefaults(pkg, ss.result)
		}
	}
	// The handler functions of the method table, inherited methods too.
	for _, fn := range g.serviceMethods(svc) {
		g.names[key{svc, "handler:" + fn.Name}] = g.claim(pkg, low+methodGoName(fn)+"Handler")
	}
}

// serviceMethods returns the functions of svc and of its bases, its own
// first, then the nearest base's, each name once. Each list is made once,
// from its base's, so that a chain of services costs what its lists hold,
// not a walk of the chain per service (a long chain of services without
// functions was quadratic).
func (g *generator) serviceMethods(svc *thrift.Service) []*thrift.Function {
	if m, ok := g.methods[svc]; ok {
		return m
	}
	chain, baseDone := unknownChain(svc, func(s *thrift.Service) bool { _, ok := g.methods[s]; return ok })
	for i := len(chain) - 1; i >= 0; i-- {
		s := chain[i]
		var inherited []*thrift.Function
		if baseDone(i) {
			inherited = g.methods[s.Base]
		}
		out := make([]*thrift.Function, 0, len(s.Functions)+len(inherited))
		seen := map[string]bool{}
		for _, fn := range s.Functions {
			if !seen[fn.Name] {
				seen[fn.Name] = true
				out = append(out, fn)
			}
		}
		for _, fn := range inherited {
			if !seen[fn.Name] {
				out = append(out, fn)
			}
		}
		g.methods[s] = out
	}
	return g.methods[svc]
}

// minMethodCode is a lower bound on the Go code that each method of a
// service, its own or inherited, costs in the service's file: an entry of
// the method table, a handler function and a client method (about 700
// bytes for the smallest, a oneway void method with one-letter names).
const minMethodCode = 640

// checkInheritance fails at the service of f at which the methods of its
// services, inherited ones included, would make the Go code of f pass
// maxOutput. Each service repeats every method it inherits, so a chain of
// services extending one another makes code that grows as the square of
// its length; this runs before any name is claimed for those methods, and
// counts without listing them.
func (g *generator) checkInheritance(f *thrift.File) {
	const budget = maxOutput / minMethodCode
	total := 0
	for _, d := range f.Decls {
		svc, ok := d.(*thrift.Service)
		if !ok {
			continue
		}
		n := g.methodCount(svc, budget+1)
		total += n
		if total <= budget {
			continue
		}
		count := strconv.Itoa(n)
		if n > budget {
			count = "more than " + strconv.Itoa(budget)
		}
		why := "service " + svc.Name + " has " + count + " methods"
		if svc.Base != nil {
			why += ", its own and those it inherits through its extends chain (" + extendsChain(svc) + "), and each service repeats in its method table, handlers and client every method it inherits"
		}
		g.fail(svc.Pos, "%s: with the services before it, the Go code generated for %s would pass %d MiB (at least %d bytes for each of more than %d methods); shorten the extends chain or spread the services over several files",
			why, path.Base(strings.ReplaceAll(f.Path, "\\", "/")), maxOutput>>20, minMethodCode, budget)
		return
	}
}

// methodCount returns the number of methods of svc, its own and inherited
// (the checker refuses a function its base has), or limit once it is that
// many or more. Counts are kept, so a chain is walked once.
func (g *generator) methodCount(svc *thrift.Service, limit int) int {
	if n, ok := g.methodCounts[svc]; ok {
		return n
	}
	chain, baseDone := unknownChain(svc, func(s *thrift.Service) bool { _, ok := g.methodCounts[s]; return ok })
	for i := len(chain) - 1; i >= 0; i-- {
		s := chain[i]
		n := len(s.Functions)
		if baseDone(i) {
			n += g.methodCounts[s.Base]
		}
		g.methodCounts[s] = min(n, limit)
	}
	return g.methodCounts[svc]
}

// unknownChain returns the services from svc up its extends chain to the
// first that known reports (not included) or the root (or, in a cycle,
// which the checker refuses, the first repeat), to be worked out from the
// last back to svc; baseDone(i) reports whether chain[i] has a base whose
// result is known by the time chain[i] is worked out (a base further up the
// chain, or one known before).
func unknownChain(svc *thrift.Service, known func(*thrift.Service) bool) (chain []*thrift.Service, baseDone func(i int) bool) {
	onChain := map[*thrift.Service]bool{}
	for s := svc; s != nil && !onChain[s]; s = s.Base {
		if known(s) {
			break
		}
		onChain[s] = true
		chain = append(chain, s)
	}
	return chain, func(i int) bool {
		b := chain[i].Base
		return b != nil && (i+1 < len(chain) && b == chain[i+1] || !onChain[b])
	}
}

// extendsChain describes the services svc extends: "C extends B extends A",
// with at most the first three bases, how many more there are and the root.
func extendsChain(svc *thrift.Service) string {
	var names []string
	seen := map[*thrift.Service]bool{svc: true}
	for s := svc.Base; s != nil && !seen[s]; s = s.Base {
		seen[s] = true
		names = append(names, s.Name)
	}
	if len(names) > 4 {
		names = append(names[:3:3], "... ("+strconv.Itoa(len(names)-4)+" more)", names[len(names)-1])
	}
	return svc.Name + " extends " + strings.Join(names, " extends ")
}

// methodGoName returns the Go name of the methods generated for fn in the
// handler and client interfaces. Close is taken by the client interface, so
// a function whose Go name would be Close gets Close_.
func methodGoName(fn *thrift.Function) string {
	n := thrift.GoName(fn.Name)
	if n == "Close" {
		n += "_"
	}
	return n
}

// lowerFirst returns s with its leading capitals lowered, keeping the last
// one of a run that a lower-case letter follows: Req -> req, ID -> id,
// URLPath -> urlPath.
func lowerFirst(s string) string {
	i := 0
	for i < len(s) && s[i] >= 'A' && s[i] <= 'Z' {
		i++
	}
	switch {
	case i == 0:
		return s
	case i > 1 && i < len(s) && s[i] >= 'a' && s[i] <= 'z':
		i--
	}
	return strings.ToLower(s[:i]) + s[i:]
}

// predeclared are Go's predeclared identifiers, which parameters must not
// shadow (generated bodies use some of them).
var predeclared = map[string]bool{
	"any": true, "bool": true, "byte": true, "comparable": true, "complex64": true,
	"complex128": true, "error": true, "float32": true, "float64": true, "int": true,
	"int8": true, "int16": true, "int32": true, "int64": true, "rune": true,
	"string": true, "uint": true, "uint8": true, "uint16": true, "uint32": true,
	"uint64": true, "uintptr": true, "true": true, "false": true, "iota": true,
	"nil": true, "append": true, "cap": true, "clear": true, "close": true,
	"complex": true, "copy": true, "delete": true, "imag": true, "len": true,
	"make": true, "max": true, "min": true, "new": true, "panic": true,
	"print": true, "println": true, "real": true, "recover": true,
}

// sigLocals are the names generated method bodies use besides parameters.
var sigLocals = map[string]bool{
	"ctx": true, "opts": true, "r": true, "err": true, "call": true, "c": true,
	"x": true, "h": true, "a": true, "res": true, "e": true, "v": true,
	"ret": true, "handler": true, "args": true, "result": true, "ok": true,
	// The glue's imports, avoided whether or not a file has them yet, so
	// that a parameter has one name everywhere.
	"context": true, "errors": true, "client": true, "server": true,
	"thrift": true, "fmt": true,
}

// param is one argument of a generated method.
type param struct {
	name  string // Go parameter name
	typ   string // Go type (the type of the Args field)
	field string // the Args field it fills
}

// methodSig is the Go signature of a service function.
type methodSig struct {
	fn     *thrift.Function
	name   string // Go method name
	params []param
	ret    string // Go type of the result; "" for void
	ss     svcStructs
	args   string // Go type of the Args struct (qualified), without "*"
	result string // same for the Result struct; "" for oneway
}

// sig returns the signature of fn as seen from this file. Types are
// resolved first (which may add imports), so that parameter names can avoid
// every import of the file (and the glue's imports, which are reserved).
func (fg *fileGen) sig(fn *thrift.Function) methodSig {
	ss := fg.g.serviceStructs(fn)
	ms := methodSig{fn: fn, name: methodGoName(fn), ss: ss, args: fg.qual(ss.args)}
	if ss.result != nil {
		ms.result = fg.qual(ss.result)
	}
	if fn.Result != nil {
		ms.ret = fg.goType(fn.Result, false)
	}
	for _, fl := range fn.Args {
		ms.params = append(ms.params, param{typ: fg.fieldGoType(ss.args, fl), field: fg.fieldGoName(ss.args, fl)})
	}
	for _, ex := range fn.Throws {
		if st := ex.Type.Struct(); st != nil {
			fg.qual(st)
		}
	}
	used := map[string]bool{}
	for _, a := range fg.imports {
		used[a] = true
	}
	for n := range fg.paramAvoid {
		used[n] = true
	}
	for i, fl := range fn.Args {
		n := lowerFirst(thrift.GoName(fl.Name))
		for isGoKeyword(n) || predeclared[n] || sigLocals[n] || used[n] {
			n += "_"
		}
		used[n] = true
		ms.params[i].name = n
	}
	return ms
}

// paramList returns "ctx context.Context, a A, b B" (plus the call options
// when withOpts).
func (ms methodSig) paramList(withOpts bool) string {
	var b strings.Builder
	b.WriteString("ctx context.Context")
	for _, p := range ms.params {
		b.WriteString(", " + p.name + " " + p.typ)
	}
	if withOpts {
		b.WriteString(", opts ...client.CallOption")
	}
	return b.String()
}

// results returns "(r T, err error)" or "(err error)".
func (ms methodSig) results() string {
	if ms.ret == "" {
		return "(err error)"
	}
	return "(r " + ms.ret + ", err error)"
}

// exceptionCase is one declared exception a handler's error is matched
// against.
type exceptionCase struct {
	typ   string // Go type, "*X"
	field string // the Result field holding it
}

// exceptions returns the declared exceptions of fn, one per Go type (the
// first field of a type wins).
func (fg *fileGen) exceptions(ms methodSig) []exceptionCase {
	var out []exceptionCase
	seen := map[*thrift.Struct]bool{}
	for i, ex := range ms.fn.Throws {
		st := ex.Type.Struct()
		if st == nil || seen[st] {
			continue
		}
		seen[st] = true
		out = append(out, exceptionCase{typ: "*" + fg.qual(st), field: fg.fieldGoName(ms.ss.result, exceptionField(ms, i))})
	}
	return out
}

// exceptionField returns the result field of the i'th declared exception
// of ms (after Success, when the function returns a value).
func exceptionField(ms methodSig, i int) *thrift.Field {
	if ms.fn.Result != nil {
		i++
	}
	return ms.ss.result.Fields[i]
}

// genService writes, for service svc: the argument and result structs of
// its functions (each result with GetError), the handler interface, the
// method table <Service>ServiceInfo (inherited methods included, with the
// Handler functions that call the handler interface), the client interface
// and its implementation over *client.Client, and the server constructor.
func (fg *fileGen) genService(svc *thrift.Service) {
	fg.imports["context"] = "context"
	fg.imports[ClientImportPath] = "client"
	fg.imports[ServerImportPath] = "server"
	n := fg.g.svcNames[svc]
	var base *thrift.Service
	if svc.Base != nil && svc.Base != svc {
		base = svc.Base
	}

	for _, fn := range svc.Functions {
		ss := fg.g.serviceStructs(fn)
		fg.genStruct(ss.args)
		if ss.result != nil {
			fg.genStruct(ss.result)
			fg.genGetError(fg.sig(fn))
		}
	}

	// Go names must be unique over the whole inheritance chain.
	all := fg.g.serviceMethods(svc)
	goNames := map[string]*thrift.Function{}
	for _, fn := range all {
		gn := methodGoName(fn)
		if prev := goNames[gn]; prev != nil {
			fg.g.fail(fn.Pos, "functions %q of %s and %q of %s both map to Go method %s", fn.Name, fn.Service.Name, prev.Name, prev.Service.Name, gn)
		}
		goNames[gn] = fn
	}
	sigs := make([]methodSig, len(all))
	for i, fn := range all {
		sigs[i] = fg.sig(fn)
	}
	own := sigs[:len(svc.Functions)]

	// The handler interface.
	fg.doc(svc.Doc)
	if svc.Doc != "" {
		fg.p("//")
	}
	fg.p("// %s is the handler of service %s: implement it and serve it with", n.iface, svc.Name)
	fg.p("// %s. A declared exception returned as the error (or wrapping it) goes", n.newServer)
	fg.p("// back to the caller as that exception; other errors become an")
	fg.p("// application exception.")
	fg.p("type %s interface {", n.iface)
	if base != nil {
		fg.p("%s", fg.qual(base))
	}
	for _, ms := range own {
		fg.doc(ms.fn.Doc)
		fg.p("%s(%s) %s", ms.name, ms.paramList(false), ms.results())
	}
	fg.p("}")
	fg.p("")

	// The method table.
	fg.p("// %s describes service %s for the RPC runtime: its methods (inherited", n.info, svc.Name)
	fg.p("// ones included), how to make their argument and result structs, and how")
	fg.p("// to call a %s handler.", n.iface)
	fg.p("var %s = &thrift.ServiceInfo{", n.info)
	fg.p("Name: %q,", svc.Name)
	if svc.Extends != "" {
		fg.p("Extends: %q,", svc.Extends)
	}
	fg.p("Methods: []thrift.MethodInfo{")
	for _, ms := range sigs {
		fg.p("{")
		fg.p("Name: %q,", ms.fn.Name)
		if ms.fn.Oneway {
			fg.p("Oneway: true,")
		}
		fg.p("NewArgs: func() thrift.FastCodec { return %s() },", fg.newFunc(ms.ss.args))
		if ms.ss.result != nil {
			fg.p("NewResult: func() thrift.FastCodec { return %s() },", fg.newFunc(ms.ss.result))
		}
		fg.p("Handler: %s,", fg.g.names[key{svc, "handler:" + ms.fn.Name}])
		fg.p("},")
	}
	fg.p("},")
	fg.p("}")
	fg.p("")
	for _, ms := range sigs {
		fg.genHandlerFunc(svc, n, ms)
	}

	// The client.
	fg.p("// %s calls service %s. Every method takes per-call options last and", n.client, svc.Name)
	fg.p("// returns a declared exception as its own type (errors.As finds it), and")
	fg.p("// other failures as the client reports them.")
	fg.p("type %s interface {", n.client)
	if base != nil {
		fg.p("%s", fg.qualName(base.File, fg.g.svcNames[base].client))
	} else {
		fg.p("// Close closes the underlying client and its connections.")
		fg.p("Close() error")
	}
	for _, ms := range own {
		fg.doc(ms.fn.Doc)
		fg.p("%s(%s) %s", ms.name, ms.paramList(true), ms.results())
	}
	fg.p("}")
	fg.p("")
	fg.p("// %s implements %s over a *client.Client.", n.clientImpl, n.client)
	fg.p("type %s struct{ c *client.Client }", n.clientImpl)
	fg.p("")
	fg.p("// %s returns a client of service %s; destService names the service", n.newClient, svc.Name)
	fg.p("// being called (in TTHeader and for service discovery) and opts configure")
	fg.p("// the client (client.WithHostPorts and others). Its TTHeader requests carry")
	fg.p("// the IDL service name %q (client.WithIDLServiceName; one in opts replaces it).", svc.Name)
	fg.p("func %s(destService string, opts ...client.Option) (%s, error) {", n.newClient, n.client)
	fg.p("c, err := client.New(destService, append([]client.Option{client.WithIDLServiceName(%q)}, opts...)...)", svc.Name)
	fg.p("if err != nil {")
	fg.p("return nil, err")
	fg.p("}")
	fg.p("return &%s{c: c}, nil", n.clientImpl)
	fg.p("}")
	fg.p("")
	fg.p("// %s returns a client of service %s that calls through c.", n.clientFrom, svc.Name)
	fg.p("func %s(c *client.Client) %s { return &%s{c: c} }", n.clientFrom, n.client, n.clientImpl)
	fg.p("")
	fg.p("// Close closes the underlying client.")
	fg.p("func (x *%s) Close() error { return x.c.Close() }", n.clientImpl)
	fg.p("")
	for _, ms := range sigs {
		fg.genClientMethod(n, ms)
	}

	// The server.
	fg.p("// %s returns a server (configured by opts) with service %s", n.newServer, svc.Name)
	fg.p("// registered, served by handler. It panics if handler is nil.")
	fg.p("func %s(handler %s, opts ...server.Option) *server.Server {", n.newServer, n.iface)
	fg.p("s := server.New(opts...)")
	fg.p("if err := %s(s, handler); err != nil {", n.register)
	fg.p("panic(err)")
	fg.p("}")
	fg.p("return s")
	fg.p("}")
	fg.p("")
	fg.p("// %s registers service %s on s, served by handler; a server", n.register, svc.Name)
	fg.p("// may hold several services.")
	fg.p("func %s(s *server.Server, handler %s) error {", n.register, n.iface)
	fg.p("if handler == nil {")
	fg.p("return fmt.Errorf(\"%s: nil handler for service %s\")", fg.pkg.name, svc.Name)
	fg.p("}")
	fg.p("return s.RegisterService(%s, handler)", n.info)
	fg.p("}")
	fg.p("")
}

// genGetError writes the GetError method of a result struct.
func (fg *fileGen) genGetError(ms methodSig) {
	exs := fg.exceptions(ms)
	name := fg.g.names[ms.ss.result]
	fg.p("// GetError returns the declared exception set in p, or nil.")
	if len(exs) == 0 {
		fg.p("func (p *%s) GetError() error { return nil }", name)
		fg.p("")
		return
	}
	fg.p("func (p *%s) GetError() error {", name)
	fg.p("if p == nil {")
	fg.p("return nil")
	fg.p("}")
	// Every exception field of the struct, duplicates of a type included.
	for i := range ms.fn.Throws {
		fn := fg.fieldGoName(ms.ss.result, exceptionField(ms, i))
		fg.p("if p.%s != nil {", fn)
		fg.p("return p.%s", fn)
		fg.p("}")
	}
	fg.p("return nil")
	fg.p("}")
	fg.p("")
}

// genHandlerFunc writes the MethodInfo.Handler function of one method of
// svc: it calls the handler and stores its result or declared exception in
// the result struct, clearing the fields it does not set (the server may
// reuse result structs). A scalar Success keeps its pointer for reuse.
func (fg *fileGen) genHandlerFunc(svc *thrift.Service, n svcNames, ms methodSig) {
	name := fg.g.names[key{svc, "handler:" + ms.fn.Name}]
	fg.p("// %s calls %s.%s with the arguments in args and stores the outcome in result.", name, n.iface, ms.name)
	fg.p("func %s(ctx context.Context, handler any, args, result thrift.FastCodec) error {", name)
	fg.p("h, ok := handler.(%s)", n.iface)
	fg.p("if !ok {")
	fg.p("return fmt.Errorf(\"%s.%s: handler %%T does not implement %s\", handler)", svc.Name, ms.fn.Name, n.iface)
	fg.p("}")
	var call strings.Builder
	call.WriteString("h." + ms.name + "(ctx")
	for _, p := range ms.params {
		call.WriteString(", a." + p.field)
	}
	call.WriteString(")")
	if len(ms.params) > 0 {
		fg.p("a, ok := args.(*%s)", ms.args)
		fg.p("if !ok {")
		fg.p("return fmt.Errorf(\"%s.%s: args are %%T, want *%s\", args)", svc.Name, ms.fn.Name, ms.args)
		fg.p("}")
	}
	var exs []exceptionCase
	if ms.ss.result != nil {
		exs = fg.exceptions(ms)
	}
	if ms.fn.Oneway || ms.ret == "" && len(exs) == 0 {
		fg.p("return %s", call.String())
		fg.p("}")
		fg.p("")
		return
	}
	fg.p("r, ok := result.(*%s)", ms.result)
	fg.p("if !ok {")
	fg.p("return fmt.Errorf(\"%s.%s: result is %%T, want *%s\", result)", svc.Name, ms.fn.Name, ms.result)
	fg.p("}")
	for i := range ms.fn.Throws {
		fg.p("r.%s = nil", fg.fieldGoName(ms.ss.result, exceptionField(ms, i)))
	}
	// What the result holds is sent: a union in it with several fields set
	// is refused instead.
	stored := "return nil"
	if fg.g.hasUnions(ms.ss.result) {
		stored = "return r.Validate()"
	}
	if ms.ret != "" {
		fg.p("ret, err := %s", call.String())
		fg.p("if err == nil {")
		switch k := kindOf(ms.fn.Result, false); {
		case fieldPointer(ms.ss.result, ms.ss.result.Fields[0]):
			fg.p("if r.Success == nil {")
			fg.p("r.Success = new(%s)", ms.ret)
			fg.p("}")
			fg.p("*r.Success = ret")
		case isContainerKind(k) || k == wBinary:
			// An empty container or binary must still be sent: nil
			// would read as unset (no result) on the other side.
			fg.p("if ret == nil {")
			fg.p("ret = %s{}", ms.ret)
			fg.p("}")
			fg.p("r.Success = ret")
		default:
			fg.p("r.Success = ret")
		}
		fg.p("%s", stored)
		fg.p("}")
		fg.p("r.Success = nil")
	} else {
		fg.p("err := %s", call.String())
		fg.p("if err == nil {")
		fg.p("return nil")
		fg.p("}")
	}
	if len(exs) > 0 {
		fg.imports["errors"] = "errors"
		fg.p("switch e := err.(type) {")
		for _, ex := range exs {
			fg.p("case %s:", ex.typ)
			fg.p("if e != nil {")
			fg.p("r.%s = e", ex.field)
			fg.p("%s", stored)
			fg.p("}")
		}
		fg.p("}")
		for _, ex := range exs {
			fg.p("if e := (%s)(nil); errors.As(err, &e) && e != nil {", ex.typ)
			fg.p("r.%s = e", ex.field)
			fg.p("%s", stored)
			fg.p("}")
		}
	}
	fg.p("return err")
	fg.p("}")
	fg.p("")
}

// genClientMethod writes one method of the client implementation.
func (fg *fileGen) genClientMethod(n svcNames, ms methodSig) {
	fg.doc(ms.fn.Doc)
	if ms.fn.Doc == "" {
		if ms.fn.Oneway {
			fg.p("// %s calls %s.%s, a oneway method: it returns once the request is written.", ms.name, ms.fn.Service.Name, ms.fn.Name)
		} else {
			fg.p("// %s calls %s.%s.", ms.name, ms.fn.Service.Name, ms.fn.Name)
		}
	}
	fg.p("func (x *%s) %s(%s) %s {", n.clientImpl, ms.name, ms.paramList(true), ms.results())
	// One allocation for both structs.
	fg.p("var call struct {")
	fg.p("args %s", ms.args)
	if ms.result != "" {
		fg.p("result %s", ms.result)
	}
	fg.p("}")
	for _, p := range ms.params {
		fg.p("call.args.%s = %s", p.field, p.name)
	}
	if fg.g.hasUnions(ms.ss.args) {
		fg.p("if err = call.args.Validate(); err != nil {")
		fg.p("return")
		fg.p("}")
	}
	if ms.fn.Oneway {
		fg.p("return x.c.Call(ctx, %q, true, &call.args, nil, opts...)", ms.fn.Name)
		fg.p("}")
		fg.p("")
		return
	}
	fg.p("if err = x.c.Call(ctx, %q, false, &call.args, &call.result, opts...); err != nil {", ms.fn.Name)
	fg.p("return")
	fg.p("}")
	fg.p("if err = call.result.GetError(); err != nil {")
	fg.p("return")
	fg.p("}")
	if ms.ret == "" {
		fg.p("return nil")
	} else {
		fg.p("if !call.result.IsSetSuccess() {")
		fg.p("return r, thrift.NewApplicationException(thrift.ExceptionMissingResult, %q)", ms.fn.Name+" failed: unknown result")
		fg.p("}")
		fg.p("return call.result.GetSuccess(), nil")
	}
	fg.p("}")
	fg.p("")
}
