package gen

import (
	"github.com/petrel-rpc/petrel/idl/thrift"
)

// wireKind is how a type travels: which codec primitive reads and writes it.
type wireKind int

const (
	wInvalid wireKind = iota
	wBool
	wI8
	wI16
	wI32 // also enums
	wI64
	wDouble
	wString // also binary used as a map key (a Go string)
	wBinary
	wUUID
	wStruct
	wList
	wSet
	wMap
)

// kindOf returns the wire kind of t; key says t is a map key, where binary
// is held as a Go string.
func kindOf(t *thrift.Type, key bool) wireKind {
	r := t.Resolved()
	switch r.Kind {
	case thrift.TypeBool:
		return wBool
	case thrift.TypeI8:
		return wI8
	case thrift.TypeI16:
		return wI16
	case thrift.TypeI32:
		return wI32
	case thrift.TypeI64:
		return wI64
	case thrift.TypeDouble:
		return wDouble
	case thrift.TypeString:
		return wString
	case thrift.TypeBinary:
		if key {
			return wString
		}
		return wBinary
	case thrift.TypeUUID:
		return wUUID
	case thrift.TypeList:
		return wList
	case thrift.TypeSet:
		return wSet
	case thrift.TypeMap:
		return wMap
	case thrift.TypeNamed:
		switch r.Ref.(type) {
		case *thrift.Enum:
			return wI32
		case *thrift.Struct:
			return wStruct
		}
	}
	return wInvalid
}

// ttype returns the codec's type tag constant for a wire kind.
func ttype(k wireKind) string {
	switch k {
	case wBool:
		return "thrift.BOOL"
	case wI8:
		return "thrift.BYTE"
	case wI16:
		return "thrift.I16"
	case wI32:
		return "thrift.I32"
	case wI64:
		return "thrift.I64"
	case wDouble:
		return "thrift.DOUBLE"
	case wString, wBinary:
		return "thrift.STRING"
	case wUUID:
		return "thrift.UUID"
	case wStruct:
		return "thrift.STRUCT"
	case wList:
		return "thrift.LIST"
	case wSet:
		return "thrift.SET"
	case wMap:
		return "thrift.MAP"
	}
	return "thrift.STOP"
}

// prim names the codec primitive (Read<prim>/Write<prim>) and the Go type
// it uses, for scalar kinds.
func prim(k wireKind) (name, goType string) {
	switch k {
	case wBool:
		return "Bool", "bool"
	case wI8:
		return "I8", "int8"
	case wI16:
		return "I16", "int16"
	case wI32:
		return "I32", "int32"
	case wI64:
		return "I64", "int64"
	case wDouble:
		return "Double", "float64"
	case wString:
		return "String", "string"
	case wBinary:
		return "Binary", "[]byte"
	case wUUID:
		return "UUID", uuidGoType
	}
	return "", ""
}

// uuidGoType is the Go type of a Thrift uuid.
const uuidGoType = "thrift.Tuuid"

// binaryFixed returns the binary-protocol wire size of a value of kind k,
// or 0 when it depends on the value.
func binaryFixed(k wireKind) int {
	switch k {
	case wBool, wI8:
		return 1
	case wI16:
		return 2
	case wI32:
		return 4
	case wI64, wDouble:
		return 8
	case wUUID:
		return 16
	}
	return 0
}

// compactFixed returns the compact-protocol wire size of a value of kind k
// (as a container element), or 0 when it depends on the value.
func compactFixed(k wireKind) int {
	switch k {
	case wBool, wI8:
		return 1
	case wDouble:
		return 8
	case wUUID:
		return 16
	}
	return 0
}

// isContainerKind reports whether k is a list, set or map.
func isContainerKind(k wireKind) bool { return k == wList || k == wSet || k == wMap }

// isNilable reports whether the Go type of t has nil as its "unset" value
// (structs, containers, binary).
func isNilable(t *thrift.Type) bool {
	switch kindOf(t, false) {
	case wStruct, wList, wSet, wMap, wBinary:
		return true
	}
	return false
}

// structOf returns the struct t denotes, or nil.
func structOf(t *thrift.Type) *thrift.Struct { return t.Struct() }

// goType returns the Go type expression of t as seen from the file being
// generated; key says t is a map key (binary becomes string there).
func (fg *fileGen) goType(t *thrift.Type, key bool) string {
	if t.Kind == thrift.TypeNamed {
		switch d := t.Ref.(type) {
		case *thrift.Typedef:
			k := kindOf(t, key)
			if k == wStruct {
				return "*" + fg.qual(d)
			}
			if key && k == wString && t.Resolved().Kind == thrift.TypeBinary {
				return "string"
			}
			if key && isContainerKind(k) {
				return "*" + fg.qual(d) // Go map keys cannot be slices or maps
			}
			return fg.qual(d)
		case *thrift.Enum:
			return fg.qual(d)
		case *thrift.Struct:
			return "*" + fg.qual(d)
		}
		fg.g.fail(t.Pos, "unresolved type %s", t.Name)
		return "any"
	}
	switch t.Kind {
	case thrift.TypeList, thrift.TypeSet, thrift.TypeMap:
		if key {
			// Go map keys cannot be slices or maps: such keys are pointers.
			return "*" + fg.goType(t, false)
		}
		if t.Kind == thrift.TypeMap {
			return "map[" + fg.goType(t.Key, true) + "]" + fg.goType(t.Elem, false)
		}
		return "[]" + fg.goType(t.Elem, false)
	}
	_, gt := prim(kindOf(t, key))
	if gt == "" {
		fg.g.fail(t.Pos, "unsupported type %s", t)
		return "any"
	}
	return gt
}

// fieldGoType returns the Go type of a struct field: a pointer for optional
// scalars, strings and enums, the plain type otherwise.
func (fg *fileGen) fieldGoType(s *thrift.Struct, fl *thrift.Field) string {
	gt := fg.goType(fl.Type, false)
	if fieldPointer(s, fl) {
		return "*" + gt
	}
	return gt
}

// fieldPointer reports whether the field is held through a pointer that the
// plain type does not already have (optional scalars, strings, enums, uuids).
func fieldPointer(s *thrift.Struct, fl *thrift.Field) bool {
	return fieldOptional(s, fl) && !isNilable(fl.Type)
}

// qual returns the Go name of decl d, qualified with its package alias
// when d lives in another package.
func (fg *fileGen) qual(d thrift.Decl) string {
	name := fg.g.names[d]
	if name == "" {
		fg.g.fail(d.DeclPos(), "no Go name for %s", d.DeclName())
	}
	return fg.qualName(d.DeclFile(), name)
}

// qualName qualifies name declared in file f.
func (fg *fileGen) qualName(f *thrift.File, name string) string {
	p := fg.g.pkgs[f]
	if p == nil || p.importPath == fg.pkg.importPath {
		return name
	}
	return fg.importAlias(p, f) + "." + name
}

// newFunc returns the constructor expression name of struct s.
func (fg *fileGen) newFunc(s *thrift.Struct) string {
	return fg.qualName(s.File, fg.g.names[key{s, "New"}])
}

// hasStrings reports whether a value of struct s can hold a string or
// binary, directly or in anything it contains.
func (g *generator) hasStrings(s *thrift.Struct) bool {
	return reaches(s, g.stringy, isString)
}

func isString(r *thrift.Type) bool {
	return r.Kind == thrift.TypeString || r.Kind == thrift.TypeBinary
}

// reaches reports whether a value of struct s can hold a value of a type
// that leaf (given resolved types) reports, directly or in anything it
// contains. The answer is about every type reachable from s, so it is found
// by one walk over them all, which visits each struct and each container
// type once (a chain of typedef map<A, A> would otherwise be walked 2^depth
// times); cache keeps finished answers (one taken while a cycle is still
// being walked would be partial).
func reaches(s *thrift.Struct, cache map[*thrift.Struct]bool, leaf func(*thrift.Type) bool) bool {
	if v, ok := cache[s]; ok {
		return v
	}
	w := typeWalk{cache: cache, leaf: leaf, seen: map[any]bool{}}
	v := w.structReaches(s)
	if !v {
		w.keepNo()
	}
	cache[s] = v
	return v
}

// keepNo records, after a walk that found no leaf, that no struct it saw
// reaches one: the walk saw everything reachable from its start, and so
// from each struct it passed through.
func (w *typeWalk) keepNo() {
	for x := range w.seen {
		if st, ok := x.(*thrift.Struct); ok {
			w.cache[st] = false
		}
	}
}

// typeWalk is one walk of reaches.
type typeWalk struct {
	cache map[*thrift.Struct]bool
	leaf  func(*thrift.Type) bool
	seen  map[any]bool // structs and container types walked
}

// structReaches reports whether s, or a type reachable from it that is not
// in seen, is one leaf reports; it adds to seen what it walks.
func (w *typeWalk) structReaches(s *thrift.Struct) bool {
	if v, ok := w.cache[s]; ok {
		return v // a finished answer
	}
	if w.seen[s] {
		return false // already being walked: what it reaches is counted there
	}
	w.seen[s] = true
	for _, fl := range s.Fields {
		if w.typeReaches(fl.Type) {
			// A yes is final even inside a cycle: keep it for every
			// struct on the way, so that a chain of structs ending in
			// a leaf is walked once, not once per struct.
			w.cache[s] = true
			return true
		}
	}
	return false
}

func (w *typeWalk) typeReaches(t *thrift.Type) bool {
	r := t.Resolved()
	if w.leaf(r) {
		return true
	}
	switch r.Kind {
	case thrift.TypeList, thrift.TypeSet, thrift.TypeMap:
		if w.seen[r] {
			return false // walked, or being walked
		}
		w.seen[r] = true
		if r.Kind == thrift.TypeMap && w.typeReaches(r.Key) {
			return true
		}
		return w.typeReaches(r.Elem)
	}
	if s := r.Struct(); s != nil {
		return w.structReaches(s)
	}
	return false
}
