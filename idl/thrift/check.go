package thrift

import (
	"crypto/sha256"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// checker resolves names across all loaded files and runs the semantic
// checks. Every error is collected; the caller sorts them.
type checker struct {
	files  []*File
	errs   ErrorList
	scopes map[*File]map[string]Decl
	// badTypedefs and badConsts are members of reference cycles; checks that
	// would follow them are skipped.
	badTypedefs map[*Typedef]bool
	badConsts   map[*Const]bool
	// doneTypedefs and doneConsts were walked already by the cycle checks.
	doneTypedefs map[*Typedef]bool
	doneConsts   map[*Const]bool
	// typedefOnPath and constOnPath give the index in the cycle checks'
	// current path of each typedef or const on it.
	typedefOnPath map[*Typedef]int
	constOnPath   map[*Const]int
	// typedefsOK and assignables remember the answers of typedefOK and
	// assignable: a typedef may use another several times (map<T,T>), so
	// walking types written out in full takes time exponential in the
	// number of typedefs.
	typedefsOK  map[*Typedef]bool
	assignables map[[2]*Type]bool
	// compositeKeys remembers constKey's answers for lists, maps and
	// structs: constants refer to constants, and [C, C] doubles per level.
	compositeKeys map[compositeKey]keyAnswer
	// longestInclude is the length of each file's longest include name.
	longestInclude map[*File]int
	// fnByGoName holds the first function of any service with each Go
	// name; fnGoNameDups every function (that first one too) of the Go
	// names that more than one service has, for checkInherited.
	fnByGoName   map[string]*Function
	fnGoNameDups map[string][]*Function
	// enumNames, enumInts and fieldNames index the values of the enums and
	// the fields of the structs that constants name, each made on first
	// use: a file may name every one of 80,000 values, and a scan each time
	// took seconds.
	enumNames  map[*Enum]map[string]*EnumValue
	enumInts   map[*Enum]map[int64]bool
	fieldNames map[*Struct]map[string]*Field
}

// firstByKey indexes items by key, keeping the first of each key (as the
// scans of Enum.Value and Struct.Field find it).
func firstByKey[K comparable, V any](items []V, key func(V) K) map[K]V {
	m := make(map[K]V, len(items))
	for _, v := range items {
		if _, dup := m[key(v)]; !dup {
			m[key(v)] = v
		}
	}
	return m
}

// enumValue is e.Value(name), through an index.
func (c *checker) enumValue(e *Enum, name string) *EnumValue {
	m := c.enumNames[e]
	if m == nil {
		m = firstByKey(e.Values, func(v *EnumValue) string { return v.Name })
		c.enumNames[e] = m
	}
	return m[name]
}

// enumHas reports whether one of e's values is n.
func (c *checker) enumHas(e *Enum, n int64) bool {
	m := c.enumInts[e]
	if m == nil {
		m = make(map[int64]bool, len(e.Values))
		for _, v := range e.Values {
			m[v.Value] = true
		}
		c.enumInts[e] = m
	}
	return m[n]
}

// structField is s.Field(name), through an index.
func (c *checker) structField(s *Struct, name string) *Field {
	m := c.fieldNames[s]
	if m == nil {
		m = firstByKey(s.Fields, func(f *Field) string { return f.Name })
		c.fieldNames[s] = m
	}
	return m[name]
}

func (c *checker) errorf(pos Pos, format string, args ...any) {
	c.errs = append(c.errs, &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

func (c *checker) run() {
	c.scopes = map[*File]map[string]Decl{}
	c.badTypedefs = map[*Typedef]bool{}
	c.badConsts = map[*Const]bool{}
	c.doneTypedefs = map[*Typedef]bool{}
	c.doneConsts = map[*Const]bool{}
	c.typedefOnPath = map[*Typedef]int{}
	c.constOnPath = map[*Const]int{}
	c.typedefsOK = map[*Typedef]bool{}
	c.assignables = map[[2]*Type]bool{}
	c.compositeKeys = map[compositeKey]keyAnswer{}
	c.longestInclude = map[*File]int{}
	c.fnByGoName = map[string]*Function{}
	c.fnGoNameDups = map[string][]*Function{}
	c.enumNames = map[*Enum]map[string]*EnumValue{}
	c.enumInts = map[*Enum]map[int64]bool{}
	c.fieldNames = map[*Struct]map[string]*Field{}
	for _, f := range c.files {
		c.declare(f)
	}
	for _, f := range c.files {
		c.resolveTypes(f)
	}
	for _, f := range c.files {
		for _, td := range f.Typedefs {
			c.typedefCycle(td, nil)
		}
	}
	for _, f := range c.files {
		c.resolveConstRefs(f)
	}
	for _, f := range c.files {
		for _, k := range f.Consts {
			c.constCycle(k, nil)
		}
	}
	c.checkChains()
	c.resolveBases()
	for _, f := range c.files {
		c.checkFile(f)
	}
	c.checkInherited()
}

// checkInherited reports each function whose Go name (and so whose name) a
// service up its extends chain already has: the generated interface and
// client would have the method twice. It runs once every service's base is
// known (a base may be checked after the services extending it). Only the
// Go names that more than one service has can clash; if there are any, it
// walks each tree of services from its root down, keeping those of the
// services above, so that it takes time linear in the number of services
// and functions.
func (c *checker) checkInherited() {
	if len(c.fnGoNameDups) == 0 {
		return
	}
	goName := map[*Function]string{}
	for g, fns := range c.fnGoNameDups {
		for _, fn := range fns {
			goName[fn] = g
		}
	}
	children := map[*Service][]*Service{}
	var roots []*Service
	for _, f := range c.files {
		for _, s := range f.Services {
			if s.Base == nil {
				roots = append(roots, s)
			} else {
				children[s.Base] = append(children[s.Base], s)
			}
		}
	}
	inherited := map[string]*Function{} // Go name -> function of a base
	// enter checks the functions of s against those of its bases, then
	// adds them; leave takes them back.
	enter := func(s *Service) {
		for _, fn := range s.Functions {
			g, ok := goName[fn]
			if !ok {
				continue
			}
			switch bf := inherited[g]; {
			case bf == nil:
			case bf.Name == fn.Name:
				c.errorf(fn.Pos, "function %q of service %s is already defined in its base service %s at %v", fn.Name, s.Name, bf.Service.Name, bf.Pos)
			default:
				c.errorf(fn.Pos, "function %q of service %s maps to Go name %s, as does function %q of its base service %s at %v", fn.Name, s.Name, g, bf.Name, bf.Service.Name, bf.Pos)
			}
		}
		for _, fn := range s.Functions {
			if g, ok := goName[fn]; ok && inherited[g] == nil {
				inherited[g] = fn
			}
		}
	}
	leave := func(s *Service) {
		for _, fn := range s.Functions {
			if g, ok := goName[fn]; ok && inherited[g] == fn {
				delete(inherited, g)
			}
		}
	}
	type frame struct {
		s    *Service
		next int // index of the next child to visit
	}
	var stack []frame
	for _, r := range roots {
		enter(r)
		stack = append(stack[:0], frame{s: r})
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if kids := children[top.s]; top.next < len(kids) {
				k := kids[top.next]
				top.next++
				enter(k)
				stack = append(stack, frame{s: k})
				continue
			}
			leave(top.s)
			stack = stack[:len(stack)-1]
		}
	}
}

// maxChain bounds chains of typedefs naming typedefs and of constants whose
// value is another constant: Resolved and Target, which the checks and the
// generator call for every use, follow them link by link, so longer chains
// would cost time quadratic in their length.
const maxChain = 1000

// checkChains reports the typedef or constant at which a chain passes
// maxChain links.
func (c *checker) checkChains() {
	var typedefs []*Typedef
	var consts []*Const
	for _, f := range c.files {
		typedefs = append(typedefs, f.Typedefs...)
		consts = append(consts, f.Consts...)
	}
	chainLengths(typedefs, func(td *Typedef) (*Typedef, bool) {
		if td.Type == nil || c.badTypedefs[td] {
			return nil, false
		}
		next, ok := td.Type.Ref.(*Typedef)
		return next, ok && !c.badTypedefs[next]
	}, func(td *Typedef) {
		c.errorf(td.Pos, "typedef %s is the end of a chain of more than %d typedefs each naming the one before; shorten it", td.Name, maxChain)
	})
	chainLengths(consts, func(k *Const) (*Const, bool) {
		if k.Value == nil || k.Value.Kind != ConstIdent || k.Value.Const == nil || c.badConsts[k] {
			return nil, false
		}
		return k.Value.Const, !c.badConsts[k.Value.Const]
	}, func(k *Const) {
		c.errorf(k.Pos, "constant %s is the end of a chain of more than %d constants each naming the one before; shorten it", k.Name, maxChain)
	})
}

// chainLengths works out, without recursion, the length of the chain that
// starts at each of all (next gives the following link) and calls tooLong
// for each link at which a chain passes maxChain links. Cycles were
// refused before: next does not follow their members.
func chainLengths[T comparable](all []T, next func(T) (T, bool), tooLong func(T)) {
	length := map[T]int{}
	for _, start := range all {
		var pending []T
		n := 0
		for q := start; ; {
			if l, done := length[q]; done {
				n = l
				break
			}
			pending = append(pending, q)
			r, ok := next(q)
			if !ok {
				break
			}
			q = r
		}
		for i := len(pending) - 1; i >= 0; i-- {
			n++
			length[pending[i]] = n
			if n == maxChain+1 {
				tooLong(pending[i])
			}
		}
	}
}

// declare builds the file's scope and reports duplicate definitions and
// definitions whose Go names clash.
func (c *checker) declare(f *File) {
	scope := map[string]Decl{}
	goNames := map[string]Decl{}
	for _, d := range f.Decls {
		name := d.DeclName()
		if prev, ok := scope[name]; ok {
			c.errorf(d.DeclPos(), "%q is already defined at %v", name, prev.DeclPos())
			continue
		}
		scope[name] = d
		g := GoName(name)
		if prev, ok := goNames[g]; ok {
			c.errorf(d.DeclPos(), "%q and %q (%v) both map to Go name %s", name, prev.DeclName(), prev.DeclPos(), g)
			continue
		}
		goNames[g] = d
	}
	c.scopes[f] = scope
}

// lookup finds a definition by a possibly qualified name (inc.Name) as seen
// from file f. On failure it returns a message saying why.
func (c *checker) lookup(f *File, name string) (Decl, string) {
	if d, ok := c.scopes[f][name]; ok {
		return d, ""
	}
	dot := strings.IndexByte(name, '.')
	if dot < 0 {
		return nil, "no definition " + strconv.Quote(name) + " in " + f.Path
	}
	// The include name may itself contain dots; try the longest first, and
	// only prefixes no longer than the longest include name, so that a name
	// of many dots is not hashed once per dot.
	longest, ok := c.longestInclude[f]
	if !ok {
		for n := range f.IncludeMap {
			longest = max(longest, len(n))
		}
		c.longestInclude[f] = longest
	}
	for i := strings.LastIndexByte(name, '.'); i > 0; i = strings.LastIndexByte(name[:i], '.') {
		if i > longest {
			continue
		}
		inc, ok := f.IncludeMap[name[:i]]
		if !ok {
			continue
		}
		rest := name[i+1:]
		if d, ok := c.scopes[inc][rest]; ok {
			return d, ""
		}
		return nil, inc.Path + " has no definition " + strconv.Quote(rest)
	}
	return nil, "no include named " + strconv.Quote(name[:dot])
}

func (c *checker) resolveTypes(f *File) {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *Typedef:
			c.resolveType(f, d.Type)
		case *Const:
			c.resolveType(f, d.Type)
		case *Struct:
			for _, fd := range d.Fields {
				c.resolveType(f, fd.Type)
			}
		case *Service:
			for _, fn := range d.Functions {
				c.resolveType(f, fn.Result)
				for _, a := range fn.Args {
					c.resolveType(f, a.Type)
				}
				for _, e := range fn.Throws {
					c.resolveType(f, e.Type)
				}
			}
		}
	}
}

func (c *checker) resolveType(f *File, t *Type) {
	if t == nil {
		return
	}
	switch t.Kind {
	case TypeList, TypeSet:
		c.resolveType(f, t.Elem)
	case TypeMap:
		c.resolveType(f, t.Key)
		c.resolveType(f, t.Elem)
	case TypeNamed:
		d, why := c.lookup(f, t.Name)
		if d == nil {
			c.errorf(t.Pos, "unknown type %q: %s", t.Name, why)
			return
		}
		switch d.(type) {
		case *Typedef, *Enum, *Struct:
			t.Ref = d
		default:
			c.errorf(t.Pos, "%q is a %s, not a type", t.Name, declKindName(d))
		}
	}
}

func declKindName(d Decl) string {
	switch d := d.(type) {
	case *Typedef:
		return "typedef"
	case *Const:
		return "const"
	case *Enum:
		return "enum"
	case *Struct:
		return d.Kind.String()
	case *Service:
		return "service"
	}
	return "definition"
}

// typedefCycle reports a typedef that refers to itself, directly or through
// other typedefs and containers.
func (c *checker) typedefCycle(td *Typedef, path []*Typedef) bool {
	if i, ok := c.typedefOnPath[td]; ok {
		if !c.badTypedefs[td] {
			c.errorf(td.Pos, "typedef cycle: %s", cycleText(path[i:], td, func(q *Typedef) string { return q.Name }))
		}
		for _, q := range path[i:] {
			c.badTypedefs[q] = true
		}
		return true
	}
	if c.doneTypedefs[td] {
		return false
	}
	c.typedefOnPath[td] = len(path)
	defer func() {
		delete(c.typedefOnPath, td)
		c.doneTypedefs[td] = true
	}()
	path = append(path, td)
	var walk func(t *Type) bool
	walk = func(t *Type) bool {
		if t == nil {
			return false
		}
		if next, ok := t.Ref.(*Typedef); ok {
			return c.typedefCycle(next, path)
		}
		return walk(t.Key) || walk(t.Elem)
	}
	return walk(td.Type)
}

// resolveConstRefs resolves identifiers in const values and field defaults.
func (c *checker) resolveConstRefs(f *File) {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *Const:
			c.resolveValue(f, d.Value, fmt.Sprintf("value of const %q", d.Name))
		case *Struct:
			for _, fd := range d.Fields {
				if fd.Default != nil {
					c.resolveValue(f, fd.Default, fmt.Sprintf("default value of field %q", fd.Name))
				}
			}
		case *Service:
			for _, fn := range d.Functions {
				for _, a := range fn.Args {
					if a.Default != nil {
						c.resolveValue(f, a.Default, fmt.Sprintf("default value of argument %q", a.Name))
					}
				}
				for _, e := range fn.Throws {
					if e.Default != nil {
						c.resolveValue(f, e.Default, fmt.Sprintf("default value of field %q", e.Name))
					}
				}
			}
		}
	}
}

func (c *checker) resolveValue(f *File, v *ConstValue, ctx string) {
	if v == nil || (v.Kind != ConstIdent && v.Kind != ConstList && v.Kind != ConstMap) {
		return
	}
	switch v.Kind {
	case ConstList:
		for _, e := range v.List {
			c.resolveValue(f, e, ctx)
		}
	case ConstMap:
		for _, e := range v.Map {
			c.resolveValue(f, e.Key, ctx)
			c.resolveValue(f, e.Value, ctx)
		}
	case ConstIdent:
		if d, _ := c.lookup(f, v.Ident); d != nil {
			if k, ok := d.(*Const); ok {
				v.Const = k
				return
			}
			c.errorf(v.Pos, "%s: %q is a %s, not a constant", ctx, v.Ident, declKindName(d))
			return
		}
		dot := strings.LastIndexByte(v.Ident, '.')
		if dot > 0 {
			if d, _ := c.lookup(f, v.Ident[:dot]); d != nil {
				e, ok := d.(*Enum)
				if !ok {
					c.errorf(v.Pos, "%s: unknown constant %q: %q is a %s, not an enum", ctx, v.Ident, v.Ident[:dot], declKindName(d))
					return
				}
				ev := c.enumValue(e, v.Ident[dot+1:])
				if ev == nil {
					c.errorf(v.Pos, "%s: enum %s has no value %q", ctx, e.Name, v.Ident[dot+1:])
					return
				}
				v.EnumValue = ev
				return
			}
		}
		_, why := c.lookup(f, v.Ident)
		c.errorf(v.Pos, "%s: unknown constant %q: %s", ctx, v.Ident, why)
	}
}

// cycleText is "a -> b -> ... -> last" for a cycle found on a walk: the
// path from last's first visit, then last again.
func cycleText[T any](cycle []T, last T, name func(T) string) string {
	names := make([]string, 0, len(cycle)+1)
	for _, q := range cycle {
		names = append(names, name(q))
	}
	return strings.Join(append(names, name(last)), " -> ")
}

// constCycle reports a const whose value refers back to itself.
func (c *checker) constCycle(k *Const, path []*Const) {
	if i, ok := c.constOnPath[k]; ok {
		if !c.badConsts[k] {
			c.errorf(k.Pos, "constant cycle: %s", cycleText(path[i:], k, func(q *Const) string { return q.Name }))
		}
		for _, q := range path[i:] {
			c.badConsts[q] = true
		}
		return
	}
	if c.badConsts[k] || c.doneConsts[k] {
		return
	}
	c.constOnPath[k] = len(path)
	defer func() {
		delete(c.constOnPath, k)
		c.doneConsts[k] = true
	}()
	path = append(path, k)
	var walk func(v *ConstValue)
	walk = func(v *ConstValue) {
		if v == nil {
			return
		}
		if v.Const != nil {
			c.constCycle(v.Const, path)
		}
		for _, e := range v.List {
			walk(e)
		}
		for _, e := range v.Map {
			walk(e.Key)
			walk(e.Value)
		}
	}
	walk(k.Value)
}

func (c *checker) checkFile(f *File) {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *Const:
			if !c.badConsts[d] && c.typeOK(d.Type) {
				c.checkValue(d.Value, d.Type, fmt.Sprintf("value of const %q", d.Name), 0)
			}
		case *Enum:
			c.checkEnum(d)
		case *Struct:
			c.checkFields(d.Fields, d.Kind.String()+" "+d.Name)
			if d.Kind == StructKindUnion {
				for _, fd := range d.Fields {
					if fd.Required == Required {
						c.errorf(fd.Pos, "union field %q cannot be required", fd.Name)
					}
				}
			}
		case *Service:
			c.checkService(f, d)
		}
	}
}

// typeOK reports whether t and everything it contains resolved, with no
// typedef cycle, so that values can be checked against it.
func (c *checker) typeOK(t *Type) bool {
	for i := 0; t != nil && i < 10000; i++ {
		switch t.Kind {
		case TypeNamed:
			if t.Ref == nil {
				return false
			}
			td, ok := t.Ref.(*Typedef)
			if !ok {
				return true
			}
			return c.typedefOK(td)
		case TypeMap:
			if !c.typeOK(t.Key) {
				return false
			}
			t = t.Elem
		case TypeList, TypeSet:
			t = t.Elem
		default:
			return true
		}
	}
	return t == nil
}

// typedefOK is typeOK of a typedef's type, worked out once per typedef.
func (c *checker) typedefOK(td *Typedef) bool {
	if c.badTypedefs[td] {
		return false
	}
	if ok, done := c.typedefsOK[td]; done {
		return ok
	}
	c.typedefsOK[td] = false // should a cycle get past the cycle check, it ends here
	ok := c.typeOK(td.Type)
	c.typedefsOK[td] = ok
	return ok
}

func (c *checker) checkEnum(e *Enum) {
	names := map[string]*EnumValue{}
	goNames := map[string]*EnumValue{}
	values := map[int64]*EnumValue{}
	for _, v := range e.Values {
		if prev, ok := names[v.Name]; ok {
			c.errorf(v.Pos, "duplicate value name %q in enum %s (first at line %d)", v.Name, e.Name, prev.Pos.Line)
			continue
		}
		names[v.Name] = v
		g := GoName(v.Name)
		if prev, ok := goNames[g]; ok {
			c.errorf(v.Pos, "enum values %q and %q (line %d) of enum %s both map to Go name %s", v.Name, prev.Name, prev.Pos.Line, e.Name, g)
		} else {
			goNames[g] = v
		}
		if prev, ok := values[v.Value]; ok {
			c.errorf(v.Pos, "enum value %s = %d repeats the value of %s (line %d) in enum %s", v.Name, v.Value, prev.Name, prev.Pos.Line, e.Name)
		} else {
			values[v.Value] = v
		}
	}
}

// checkFields checks a field list: ids, names, Go names, defaults.
// Argument and throws lists become fields of generated structs too, so the
// same rules apply to them.
func (c *checker) checkFields(fields []*Field, context string) {
	ids := map[int]*Field{}
	names := map[string]*Field{}
	goNames := map[string]*Field{}
	for _, fd := range fields {
		if prev, ok := ids[fd.ID]; ok && fd.ExplicitID {
			c.errorf(fd.Pos, "duplicate field id %d in %s: already used by field %q (line %d)", fd.ID, context, prev.Name, prev.Pos.Line)
		} else {
			ids[fd.ID] = fd
		}
		if prev, ok := names[fd.Name]; ok {
			c.errorf(fd.Pos, "duplicate field name %q in %s (first at line %d)", fd.Name, context, prev.Pos.Line)
			continue
		}
		names[fd.Name] = fd
		g := GoName(fd.Name)
		if prev, ok := goNames[g]; ok {
			c.errorf(fd.Pos, "fields %q and %q (line %d) of %s both map to Go name %s", fd.Name, prev.Name, prev.Pos.Line, context, g)
		} else {
			goNames[g] = fd
		}
		if fd.Default != nil && c.typeOK(fd.Type) {
			c.checkValue(fd.Default, fd.Type, fmt.Sprintf("default value of field %q", fd.Name), 0)
		}
	}
	// Each field Foo gets GetFoo and IsSetFoo methods; no field may be named
	// like one of them.
	for _, fd := range fields {
		g := GoName(fd.Name)
		for _, prefix := range []string{"Get", "IsSet"} {
			if other, ok := goNames[prefix+g]; ok {
				c.errorf(other.Pos, "field %q of %s maps to Go name %s, which is the %s method generated for field %q",
					other.Name, context, prefix+g, prefix, fd.Name)
			}
		}
	}
}

// resolveBases looks up the base of every service, then walks the chains of
// bases once each, whatever the order the services are declared in, and
// breaks each cycle at the service whose base closes it (the last of the
// cycle on the walk), reporting it there. (Looking bases up service by
// service and walking each chain as far as it was known walked a chain of
// n services, its root declared last, n times.)
func (c *checker) resolveBases() {
	for _, f := range c.files {
		for _, s := range f.Services {
			if s.Extends == "" {
				continue
			}
			d, why := c.lookup(f, s.Extends)
			switch {
			case d == nil:
				c.errorf(s.ExtendsPos, "service %s extends unknown service %q: %s", s.Name, s.Extends, why)
			case d.DeclKind() != DeclService:
				c.errorf(s.ExtendsPos, "service %s extends %q, which is a %s, not a service", s.Name, s.Extends, declKindName(d))
			default:
				s.Base = d.(*Service)
			}
		}
	}
	const onPath, done = 1, 2
	state := map[*Service]int{}
	at := map[*Service]int{} // index on the current path
	var path []*Service
	for _, f := range c.files {
		for _, s := range f.Services {
			path = path[:0]
			for b := s; b != nil && state[b] != done; b = b.Base {
				if state[b] == onPath {
					last := path[len(path)-1]
					chain := []string{last.Name}
					for _, p := range path[at[b]:] {
						chain = append(chain, p.Name)
					}
					c.errorf(last.ExtendsPos, "service inheritance cycle: %s", strings.Join(chain, " -> "))
					last.Base = nil
					break
				}
				state[b], at[b] = onPath, len(path)
				path = append(path, b)
			}
			for _, p := range path {
				state[p] = done
			}
		}
	}
}

func (c *checker) checkService(f *File, s *Service) {
	names := map[string]*Function{}
	goNames := map[string]*Function{}
	for _, fn := range s.Functions {
		if prev, ok := names[fn.Name]; ok {
			c.errorf(fn.Pos, "duplicate function %q in service %s (first at line %d)", fn.Name, s.Name, prev.Pos.Line)
			continue
		}
		names[fn.Name] = fn
		g := GoName(fn.Name)
		if prev, ok := goNames[g]; ok {
			c.errorf(fn.Pos, "functions %q and %q (line %d) of service %s both map to Go name %s", fn.Name, prev.Name, prev.Pos.Line, s.Name, g)
		} else {
			goNames[g] = fn
			if first := c.fnByGoName[g]; first == nil {
				c.fnByGoName[g] = fn
			} else {
				if len(c.fnGoNameDups[g]) == 0 {
					c.fnGoNameDups[g] = append(c.fnGoNameDups[g], first)
				}
				c.fnGoNameDups[g] = append(c.fnGoNameDups[g], fn)
			}
		}
		if fn.Oneway && fn.Result != nil {
			c.errorf(fn.Pos, "oneway function %q must return void, not %s", fn.Name, fn.Result)
		}
		if fn.Oneway && len(fn.Throws) > 0 {
			c.errorf(fn.Throws[0].Pos, "oneway function %q cannot declare throws", fn.Name)
		}
		c.checkFields(fn.Args, "the arguments of "+s.Name+"."+fn.Name)
		c.checkFields(fn.Throws, "the throws of "+s.Name+"."+fn.Name)
		for _, e := range fn.Throws {
			// The generated result struct holds the return value in a field
			// named Success beside one field per exception.
			if GoName(e.Name) == "Success" {
				c.errorf(e.Pos, "throws field %q of %s.%s maps to Go name Success, which the generated result struct uses for the return value", e.Name, s.Name, fn.Name)
			}
			if !c.typeOK(e.Type) {
				continue
			}
			if st := e.Type.Struct(); st == nil || st.Kind != StructKindException {
				c.errorf(e.Type.Pos, "throws field %q of %s.%s has type %s, which is not an exception", e.Name, s.Name, fn.Name, e.Type)
			}
		}
	}
}

var intRanges = map[TypeKind][2]int64{
	TypeI8:  {math.MinInt8, math.MaxInt8},
	TypeI16: {math.MinInt16, math.MaxInt16},
	TypeI32: {math.MinInt32, math.MaxInt32},
	TypeI64: {math.MinInt64, math.MaxInt64},
}

// describeValue names a value for messages: `string "abc"`, `list`, ...
func describeValue(v *ConstValue) string {
	switch v.Kind {
	case ConstInt, ConstDouble, ConstBool:
		return v.Kind.String() + " " + v.IDLString()
	case ConstString:
		s := v.String
		if len(s) > 40 {
			s = s[:40] + "..."
		}
		return "string " + strconv.Quote(s)
	case ConstIdent:
		return strconv.Quote(v.Ident)
	case ConstList, ConstMap:
		s := v.IDLString()
		if len(s) > 40 {
			s = s[:40] + "..."
		}
		return v.Kind.String() + " " + s
	}
	return v.Kind.String()
}

const maxCheckDepth = 200

// checkValue checks that v may be assigned to a field or const of type t.
func (c *checker) checkValue(v *ConstValue, t *Type, ctx string, depth int) {
	if v == nil || t == nil {
		return
	}
	if depth > maxCheckDepth {
		c.errorf(v.Pos, "%s: value nests too deeply", ctx)
		return
	}
	rt := t.Resolved()
	if v.Kind == ConstIdent {
		switch {
		case v.EnumValue != nil:
			if e := t.Enum(); e != nil {
				if v.EnumValue.Enum != e {
					c.errorf(v.Pos, "%s: %s is a value of enum %s, not of %s", ctx, v.Ident, v.EnumValue.Enum.Name, e.Name)
				}
				return
			}
			if r, ok := intRanges[rt.Kind]; ok {
				if n := v.EnumValue.Value; n < r[0] || n > r[1] {
					c.errorf(v.Pos, "%s: %s = %d does not fit in %s", ctx, v.Ident, n, rt.Kind)
				}
				return
			}
			c.errorf(v.Pos, "%s: expected %s, found enum value %s", ctx, t, v.Ident)
		case v.Const != nil:
			if c.badConsts[v.Const] || !c.typeOK(v.Const.Type) {
				return
			}
			if !c.assignable(v.Const.Type, t) {
				// A constant of another integer type is fine if its value fits.
				target := v.Target()
				if r, ok := intRanges[rt.Kind]; ok && target != nil && target.Kind == ConstInt {
					if _, ok := intRanges[v.Const.Type.Resolved().Kind]; ok {
						if target.Int < r[0] || target.Int > r[1] {
							c.errorf(v.Pos, "%s: %s = %d does not fit in %s (%d to %d)", ctx, v.Ident, target.Int, rt.Kind, r[0], r[1])
						}
						return
					}
				}
				// An integer constant where a double goes, as the literal
				// would be (Apache's compiler takes it too).
				if _, isInt := intRanges[v.Const.Type.Resolved().Kind]; isInt && rt.Kind == TypeDouble && target != nil && target.Kind == ConstInt {
					return
				}
				c.errorf(v.Pos, "%s: constant %s has type %s, which cannot be used as %s", ctx, v.Ident, v.Const.Type, t)
			}
		}
		return
	}
	mismatch := func() {
		c.errorf(v.Pos, "%s: expected %s, found %s", ctx, t, describeValue(v))
	}
	switch rt.Kind {
	case TypeBool:
		if v.Kind == ConstBool {
			return
		}
		if v.Kind == ConstInt && (v.Int == 0 || v.Int == 1) {
			return
		}
		mismatch()
	case TypeI8, TypeI16, TypeI32, TypeI64:
		if v.Kind != ConstInt && v.Kind != ConstBool {
			mismatch()
			return
		}
		r := intRanges[rt.Kind]
		if v.Int < r[0] || v.Int > r[1] {
			c.errorf(v.Pos, "%s: %d does not fit in %s (%d to %d)", ctx, v.Int, rt.Kind, r[0], r[1])
		}
	case TypeDouble:
		if v.Kind != ConstInt && v.Kind != ConstDouble {
			mismatch()
		}
	case TypeString, TypeBinary:
		if v.Kind != ConstString {
			mismatch()
		}
	case TypeUUID:
		if v.Kind != ConstString {
			mismatch()
			return
		}
		if !validUUID(v.String) {
			c.errorf(v.Pos, "%s: %q is not a UUID (expected 8-4-4-4-12 hexadecimal digits)", ctx, v.String)
		}
	case TypeList, TypeSet:
		if v.Kind != ConstList {
			mismatch()
			return
		}
		seen := map[string]*ConstValue{}
		for _, e := range v.List {
			c.checkValue(e, rt.Elem, ctx, depth+1)
			if rt.Kind != TypeSet {
				continue
			}
			if k, ok := c.constKey(e, rt.Elem); ok {
				if prev, dup := seen[k]; dup {
					c.errorf(e.Pos, "%s: duplicate set element %s, the same as %s at %d:%d", ctx, describeValue(e), describeValue(prev), prev.Pos.Line, prev.Pos.Col)
				} else {
					seen[k] = e
				}
			}
		}
	case TypeMap:
		if v.Kind != ConstMap {
			mismatch()
			return
		}
		seen := map[string]*ConstValue{}
		for _, e := range v.Map {
			c.checkValue(e.Key, rt.Key, ctx, depth+1)
			c.checkValue(e.Value, rt.Elem, ctx, depth+1)
			if k, ok := c.constKey(e.Key, rt.Key); ok {
				if prev, dup := seen[k]; dup {
					c.errorf(e.Key.Pos, "%s: duplicate map key %s, the same as %s at %d:%d", ctx, describeValue(e.Key), describeValue(prev), prev.Pos.Line, prev.Pos.Col)
				} else {
					seen[k] = e.Key
				}
			}
		}
	case TypeNamed:
		switch d := rt.Ref.(type) {
		case *Enum:
			if v.Kind != ConstInt {
				mismatch()
				return
			}
			if !c.enumHas(d, v.Int) {
				c.errorf(v.Pos, "%s: %d is not a value of enum %s", ctx, v.Int, d.Name)
			}
		case *Struct:
			if v.Kind != ConstMap {
				mismatch()
				return
			}
			seen := map[string]*ConstValue{}
			var set *ConstValue // a union's field given first
			for _, e := range v.Map {
				if e.Key.Kind == ConstString {
					if prev, dup := seen[e.Key.String]; dup {
						c.errorf(e.Key.Pos, "%s: field %q of %s %s is given twice (first at %d:%d)", ctx, e.Key.String, d.Kind, d.Name, prev.Pos.Line, prev.Pos.Col)
						continue
					}
					seen[e.Key.String] = e.Key
				}
				if e.Key.Kind != ConstString {
					c.errorf(e.Key.Pos, "%s: a %s constant needs field names as keys, found %s", ctx, d.Kind, describeValue(e.Key))
					continue
				}
				fd := c.structField(d, e.Key.String)
				if fd == nil {
					c.errorf(e.Key.Pos, "%s: %s %s has no field %q", ctx, d.Kind, d.Name, e.Key.String)
					continue
				}
				if d.Kind == StructKindUnion {
					if set != nil {
						c.errorf(e.Key.Pos, "%s: union %s sets at most one field, and field %q is given beside %q (at %d:%d)", ctx, d.Name, e.Key.String, set.String, set.Pos.Line, set.Pos.Col)
						continue
					}
					set = e.Key
				}
				if c.typeOK(fd.Type) {
					c.checkValue(e.Value, fd.Type, ctx, depth+1)
				}
			}
		}
	}
}

// constKey returns a text that two keys of a map constant of key type t, or
// two elements of a set constant of element type t, share when they are
// equal values (after following constants and enum values: 1 and 0x1, E.A
// and its number, "a" and a constant "a"). Lists and sets compare element
// by element in order, maps whatever their order, structs by the fields
// given: as a writer comparing the Go values finds them equal (Apache's Go
// writer refuses a set holding two), except that a struct field left out
// and one given its default value differ here. The text of a list, map or
// struct is a SHA-256 of its parts' texts, remembered per value and type,
// so that the work is linear in the number of values. ok is false for
// values that are not valid of type t (the checks report those).
func (c *checker) constKey(v *ConstValue, t *Type) (key string, ok bool) {
	return c.constKeyDepth(v, t, 0)
}

// compositeKey and keyAnswer are the key and answer of constKey's memo.
type compositeKey struct {
	v *ConstValue
	t *Type
}

type keyAnswer struct {
	key string
	ok  bool
}

func (c *checker) constKeyDepth(v *ConstValue, t *Type, depth int) (string, bool) {
	rt := t.Resolved()
	if rt == nil || depth > maxCheckDepth {
		return "", false
	}
	tv := v.Target()
	if tv == nil {
		return "", false
	}
	if tv.Kind != ConstList && tv.Kind != ConstMap {
		return scalarKey(tv, rt)
	}
	mk := compositeKey{tv, rt}
	if a, done := c.compositeKeys[mk]; done {
		return a.key, a.ok
	}
	key, ok := c.compositeKeyOf(tv, rt, depth)
	c.compositeKeys[mk] = keyAnswer{key, ok}
	return key, ok
}

// compositeKeyOf is constKey for a list or map constant tv of type rt.
func (c *checker) compositeKeyOf(tv *ConstValue, rt *Type, depth int) (string, bool) {
	var keys []string
	var tag byte
	switch rt.Kind {
	case TypeList, TypeSet:
		if tv.Kind != ConstList {
			return "", false
		}
		tag = 'L'
		for _, e := range tv.List {
			k, ok := c.constKeyDepth(e, rt.Elem, depth+1)
			if !ok {
				return "", false
			}
			keys = append(keys, k)
		}
	case TypeMap:
		if tv.Kind != ConstMap {
			return "", false
		}
		tag = 'M'
		for _, e := range tv.Map {
			k, kok := c.constKeyDepth(e.Key, rt.Key, depth+1)
			val, vok := c.constKeyDepth(e.Value, rt.Elem, depth+1)
			if !kok || !vok {
				return "", false
			}
			keys = append(keys, joinKeys('E', []string{k, val}))
		}
		slices.Sort(keys)
	case TypeNamed:
		d, isStruct := rt.Ref.(*Struct)
		if !isStruct || tv.Kind != ConstMap {
			return "", false
		}
		tag = 'S'
		for _, e := range tv.Map {
			if e.Key.Kind != ConstString {
				return "", false
			}
			fd := c.structField(d, e.Key.String)
			if fd == nil {
				return "", false
			}
			val, ok := c.constKeyDepth(e.Value, fd.Type, depth+1)
			if !ok {
				return "", false
			}
			keys = append(keys, joinKeys('F', []string{e.Key.String, val}))
		}
		slices.Sort(keys)
	default:
		return "", false
	}
	sum := sha256.Sum256([]byte(joinKeys(tag, keys)))
	return string(sum[:]), true
}

// scalarKey is constKey for a constant tv (not a list or map) of type rt.
func scalarKey(tv *ConstValue, rt *Type) (key string, ok bool) {
	n, isInt := int64(0), false
	switch {
	case tv.Kind == ConstIdent && tv.EnumValue != nil:
		n, isInt = tv.EnumValue.Value, true
	case tv.Kind == ConstInt:
		n, isInt = tv.Int, true
	case tv.Kind == ConstBool:
		if tv.Bool {
			n = 1
		}
		isInt = true
	}
	switch rt.Kind {
	case TypeBool, TypeI8, TypeI16, TypeI32, TypeI64:
		if isInt {
			if rt.Kind == TypeBool && n != 0 {
				n = 1
			}
			return strconv.FormatInt(n, 10), true
		}
	case TypeNamed:
		if rt.Enum() != nil && isInt {
			return strconv.FormatInt(n, 10), true
		}
	case TypeDouble:
		f := tv.Double
		switch {
		case isInt && tv.Kind == ConstInt:
			f = float64(n)
		case tv.Kind != ConstDouble:
			return "", false
		}
		if f == 0 {
			f = 0 // -0 and 0 are one key
		}
		return strconv.FormatFloat(f, 'g', -1, 64), true
	case TypeString, TypeBinary:
		if tv.Kind == ConstString {
			return tv.String, true
		}
	case TypeUUID:
		if tv.Kind == ConstString && validUUID(tv.String) {
			return strings.ToLower(strings.NewReplacer("{", "", "}", "", "-", "").Replace(tv.String)), true
		}
	}
	return "", false
}

// joinKeys joins the keys of a composite value's parts, each prefixed with
// its length, so that different parts never join to the same text.
func joinKeys(tag byte, keys []string) string {
	var b strings.Builder
	b.WriteByte(tag)
	for _, k := range keys {
		b.WriteString(strconv.Itoa(len(k)))
		b.WriteByte(':')
		b.WriteString(k)
	}
	return b.String()
}

// assignable reports whether a constant declared with type from may be used
// where type to is expected: the same type after following typedefs.
func (c *checker) assignable(from, to *Type) bool {
	from, to = from.Resolved(), to.Resolved()
	if from == to {
		return true
	}
	if from == nil || to == nil {
		return false
	}
	key := [2]*Type{from, to}
	if ok, done := c.assignables[key]; done {
		return ok
	}
	c.assignables[key] = false // should a cycle get past the checks, it ends here
	ok := c.assignableResolved(from, to)
	c.assignables[key] = ok
	return ok
}

// assignableResolved is assignable of two types that are not typedefs.
func (c *checker) assignableResolved(from, to *Type) bool {
	if from.Kind != to.Kind {
		if from.Kind == TypeI8 || from.Kind == TypeI16 || from.Kind == TypeI32 || from.Kind == TypeI64 {
			return false
		}
		return (from.Kind == TypeString && to.Kind == TypeBinary) || (from.Kind == TypeBinary && to.Kind == TypeString)
	}
	switch from.Kind {
	case TypeList, TypeSet:
		return c.assignable(from.Elem, to.Elem)
	case TypeMap:
		return c.assignable(from.Key, to.Key) && c.assignable(from.Elem, to.Elem)
	case TypeNamed:
		return from.Ref == to.Ref
	}
	return true
}

func validUUID(s string) bool {
	if len(s) == 38 && s[0] == '{' && s[37] == '}' {
		s = s[1:37]
	}
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if !isHex(s[i]) {
				return false
			}
		}
	}
	return true
}
