package gen

import (
	"strconv"

	"github.com/petrel-rpc/petrel/idl/thrift"
)

// hasUnions reports whether s is a union or can hold one (in a field, a
// container or a struct it holds): such structs get a Validate method.
func (g *generator) hasUnions(s *thrift.Struct) bool {
	return s.Kind == thrift.StructKindUnion || reaches(s, g.unionish, isUnion)
}

func isUnion(r *thrift.Type) bool {
	st := r.Struct()
	return st != nil && st.Kind == thrift.StructKindUnion
}

// typeHasUnions is hasUnions for the values of type t.
func (g *generator) typeHasUnions(t *thrift.Type) bool {
	if v, ok := g.typeUnionish[t]; ok {
		return v
	}
	w := typeWalk{cache: g.unionish, leaf: isUnion, seen: map[any]bool{}}
	v := w.typeReaches(t)
	if !v {
		w.keepNo()
	}
	g.typeUnionish[t] = v
	return v
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
			fg.p("if p.%s != nil {", fg.fieldGoName(s, fl))
			fg.p("set++")
			fg.p("}")
		}
		fg.p("if set > 1 {")
		fg.p("return thrift.UnionFieldsError(%s, set)", strconv.Quote(s.Name))
		fg.p("}")
	}
	for _, fl := range s.Fields {
		if fg.g.typeHasUnions(fl.Type) {
			fg.validateValue(fl.Type, false, "p."+fg.fieldGoName(s, fl))
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
