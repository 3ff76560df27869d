package gen

import (
	"strconv"

	"github.com/petrel-rpc/petrel/idl/thrift"
)

// hasUnions reports whether s is a union or can hold one (in a field, a
// container or a struct it holds): such structs get a Validate method. Like
// hasStrings, only finished answers are cached.
func (g *generator) hasUnions(s *thrift.Struct) bool {
	if v, ok := g.unionish[s]; ok {
		return v
	}
	seen := map[*thrift.Struct]bool{}
	v := g.reachesUnions(s, seen)
	if !v {
		for x := range seen {
			g.unionish[x] = false
		}
	}
	g.unionish[s] = v
	return v
}

func (g *generator) reachesUnions(s *thrift.Struct, seen map[*thrift.Struct]bool) bool {
	if v, ok := g.unionish[s]; ok {
		return v
	}
	if s.Kind == thrift.StructKindUnion {
		return true
	}
	if seen[s] {
		return false // already being walked: what it reaches is counted there
	}
	seen[s] = true
	for _, fl := range s.Fields {
		if g.typeReachesUnions(fl.Type, seen) {
			return true
		}
	}
	return false
}

func (g *generator) typeReachesUnions(t *thrift.Type, seen map[*thrift.Struct]bool) bool {
	r := t.Resolved()
	switch r.Kind {
	case thrift.TypeList, thrift.TypeSet:
		return g.typeReachesUnions(r.Elem, seen)
	case thrift.TypeMap:
		return g.typeReachesUnions(r.Key, seen) || g.typeReachesUnions(r.Elem, seen)
	}
	if st := r.Struct(); st != nil {
		return g.reachesUnions(st, seen)
	}
	return false
}

// typeHasUnions is hasUnions for the values of type t.
func (g *generator) typeHasUnions(t *thrift.Type) bool {
	return g.typeReachesUnions(t, map[*thrift.Struct]bool{})
}

// genValidate writes the Validate method of s, when s is a union or holds
// one: it reports a union with more than one field set (which FastWrite
// would write whole, not a Thrift union), in s or anywhere in it.
func (fg *fileGen) genValidate(s *thrift.Struct) {
	if !fg.g.hasUnions(s) {
		return
	}
	name := fg.g.names[s]
	if s.Kind == thrift.StructKindUnion {
		fg.p("// Validate returns an error if more than one field of p is set (a union")
		fg.p("// holds one at most), or of a union p holds. Generated clients and")
		fg.p("// handlers call it before sending; FastWrite does not.")
	} else {
		fg.p("// Validate returns an error if a union p holds has more than one field set.")
		fg.p("// Generated clients and handlers call it before sending; FastWrite does not.")
	}
	fg.p("func (p *%s) Validate() error {", name)
	fg.p("if p == nil {")
	fg.p("return nil")
	fg.p("}")
	if s.Kind == thrift.StructKindUnion {
		fg.p("set := 0")
		for _, fl := range s.Fields {
			fg.p("if p.%s != nil {", fieldGoName(s, fl))
			fg.p("set++")
			fg.p("}")
		}
		fg.p("if set > 1 {")
		fg.p("return thrift.UnionFieldsError(%s, set)", strconv.Quote(s.Name))
		fg.p("}")
	}
	for _, fl := range s.Fields {
		if fg.g.typeHasUnions(fl.Type) {
			fg.validateValue(fl.Type, false, "p."+fieldGoName(s, fl))
		}
	}
	fg.p("return nil")
	fg.p("}")
	fg.p("")
}

// validateValue writes the statements that validate v, a value of type t
// that can hold a union (key says v is a map key: a container key is a
// pointer).
func (fg *fileGen) validateValue(t *thrift.Type, key bool, v string) {
	r := t.Resolved()
	if r.Kind == thrift.TypeNamed {
		fg.p("if err := %s.Validate(); err != nil {", v)
		fg.p("return err")
		fg.p("}")
		return
	}
	if key {
		v = "*" + v
		fg.p("if %s != nil {", v[1:])
		defer fg.p("}")
	}
	switch r.Kind {
	case thrift.TypeList, thrift.TypeSet:
		e := fg.local("e")
		fg.p("for _, %s := range %s {", e, v)
		fg.validateValue(r.Elem, false, e)
		fg.p("}")
	case thrift.TypeMap:
		kv, ev := "_", "_"
		kh, eh := fg.g.typeHasUnions(r.Key), fg.g.typeHasUnions(r.Elem)
		if kh {
			kv = fg.local("k")
		}
		if eh {
			ev = fg.local("e")
		}
		if ev == "_" {
			fg.p("for %s := range %s {", kv, v)
		} else {
			fg.p("for %s, %s := range %s {", kv, ev, v)
		}
		if kh {
			fg.validateValue(r.Key, true, kv)
		}
		if eh {
			fg.validateValue(r.Elem, false, ev)
		}
		fg.p("}")
	}
}
