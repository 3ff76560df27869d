package gen

import (
	"encoding/hex"
	"math"
	"strconv"
	"strings"

	"github.com/petrel-rpc/petrel/idl/thrift"
)

// genTypedef writes `type T = X` for structs and enums (so that T keeps
// their methods and constructors work) and `type T X` otherwise (a defined
// type users may add methods to; the codec converts at the boundary).
func (fg *fileGen) genTypedef(td *thrift.Typedef) {
	fg.doc(td.Doc)
	name := fg.g.names[td]
	target := fg.goType(td.Type, false)
	switch kindOf(td.Type, false) {
	case wStruct:
		fg.p("type %s = %s", name, strings.TrimPrefix(target, "*"))
	default:
		if td.Type.Enum() != nil && td.Type.Resolved().Kind == thrift.TypeNamed {
			fg.p("type %s = %s", name, target)
		} else {
			fg.p("type %s %s", name, target)
		}
	}
	fg.p("")
}

// genConst writes a Go const for scalar constants and a var for the rest.
func (fg *fileGen) genConst(c *thrift.Const) {
	fg.doc(c.Doc)
	name := fg.g.names[c]
	expr := fg.constExpr(c.Type, c.Value)
	switch k := kindOf(c.Type, false); k {
	case wBool, wI8, wI16, wI32, wI64, wDouble, wString:
		decl := "const"
		if k == wDouble && isNegZero(c.Value.Target()) {
			decl = "var" // a Go constant cannot be negative zero
		}
		fg.p("%s %s %s = %s", decl, name, fg.goType(c.Type, false), expr)
	default:
		fg.p("var %s = %s", name, expr)
	}
	fg.p("")
}

// constExpr renders constant value v of type t as a Go expression.
func (fg *fileGen) constExpr(t *thrift.Type, v *thrift.ConstValue) string {
	v = v.Target()
	if v == nil {
		fg.g.fail(t.Pos, "missing constant value")
		return "0"
	}
	gt := fg.goType(t, false)
	k := kindOf(t, false)
	if v.Kind == thrift.ConstIdent {
		if v.EnumValue == nil {
			fg.g.fail(v.Pos, "unresolved constant %s", v.Ident)
			return "0"
		}
		name := fg.qualName(v.EnumValue.Enum.File, fg.g.names[v.EnumValue])
		if t.Enum() != nil {
			return name
		}
		return gt + "(" + name + ")"
	}
	wrap := func(lit string, builtin string) string {
		if gt == builtin {
			return lit
		}
		return gt + "(" + lit + ")"
	}
	switch k {
	case wBool:
		b := v.Bool
		if v.Kind == thrift.ConstInt {
			b = v.Int != 0
		}
		return wrap(strconv.FormatBool(b), "bool")
	case wI8, wI16, wI32, wI64:
		n := v.Int
		if v.Kind == thrift.ConstDouble {
			n = int64(v.Double)
		}
		_, builtin := prim(k)
		if t.Enum() != nil {
			builtin = ""
		}
		return wrap(strconv.FormatInt(n, 10), builtin)
	case wDouble:
		var lit string
		if v.Kind == thrift.ConstInt {
			lit = strconv.FormatInt(v.Int, 10)
		} else if isNegZero(v) {
			// Go constant arithmetic has no negative zero (-0 and -0.0
			// are 0): only a function can make it.
			lit = fg.stdAlias("math", "math") + ".Copysign(0, -1)"
		} else {
			lit = strconv.FormatFloat(v.Double, 'g', -1, 64)
		}
		return wrap(lit, "float64")
	case wString:
		return wrap(strconv.Quote(v.String), "string")
	case wBinary:
		return gt + "(" + strconv.Quote(v.String) + ")"
	case wUUID:
		u, ok := parseUUID(v.String)
		if !ok {
			fg.g.fail(v.Pos, "%q is not a uuid", v.String)
		}
		var b strings.Builder
		b.WriteString(gt + "{")
		for i, x := range u {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("0x" + hex.EncodeToString([]byte{x}))
		}
		b.WriteString("}")
		return b.String()
	case wList, wSet:
		r := t.Resolved()
		var b strings.Builder
		b.WriteString(gt + "{")
		for _, e := range v.List {
			b.WriteString(fg.constExpr(r.Elem, e) + ", ")
			fg.building(b.Len())
		}
		b.WriteString("}")
		return b.String()
	case wMap:
		r := t.Resolved()
		var b strings.Builder
		b.WriteString(gt + "{")
		for _, e := range v.Map {
			b.WriteString(fg.constKeyExpr(r.Key, e.Key) + ": " + fg.constExpr(r.Elem, e.Value) + ", ")
			fg.building(b.Len())
		}
		b.WriteString("}")
		return b.String()
	case wStruct:
		s := structOf(t)
		var b strings.Builder
		b.WriteString("&" + strings.TrimPrefix(gt, "*") + "{")
		for _, e := range v.Map {
			fname := e.Key.Target()
			fl := s.Field(fname.String)
			if fl == nil {
				fg.g.fail(e.Key.Pos, "struct %s has no field %q", s.Name, fname.String)
				continue
			}
			val := fg.constExpr(fl.Type, e.Value)
			if fieldPointer(s, fl) {
				ft := fg.goType(fl.Type, false)
				val = "func() *" + ft + " { v := " + ft + "(" + val + "); return &v }()"
			}
			b.WriteString(fg.fieldGoName(s, fl) + ": " + val + ", ")
			fg.building(b.Len())
		}
		b.WriteString("}")
		return b.String()
	}
	fg.g.fail(v.Pos, "cannot render constant of type %s", t)
	return "0"
}

// isNegZero reports whether v is the double constant negative zero.
func isNegZero(v *thrift.ConstValue) bool {
	return v != nil && v.Kind == thrift.ConstDouble && v.Double == 0 && math.Signbit(v.Double)
}

// constKeyExpr renders a map key constant: binary keys are Go strings, and
// list, set and map keys are pointers (see goType), so their literal is
// taken the address of.
func (fg *fileGen) constKeyExpr(t *thrift.Type, v *thrift.ConstValue) string {
	k := kindOf(t, true)
	if k == wString && t.Resolved().Kind == thrift.TypeBinary {
		return strconv.Quote(v.Target().String)
	}
	if isContainerKind(k) {
		return "&" + fg.constExpr(t, v)
	}
	return fg.constExpr(t, v)
}

// parseUUID parses the canonical 8-4-4-4-12 hex form (with or without
// braces or dashes).
func parseUUID(s string) ([16]byte, bool) {
	var u [16]byte
	s = strings.Trim(s, "{}")
	s = strings.ReplaceAll(s, "-", "")
	if len(s) != 32 {
		return u, false
	}
	if _, err := hex.Decode(u[:], []byte(s)); err != nil {
		return u, false
	}
	return u, true
}

// genEnum writes an enum: a named int64 type, one constant per member,
// String, <E>FromString, Ptr, MarshalText and UnmarshalText.
func (fg *fileGen) genEnum(e *thrift.Enum) {
	name := fg.g.names[e]
	fg.doc(e.Doc)
	fg.p("type %s int64", name)
	fg.p("")
	if len(e.Values) > 0 {
		fg.p("const (")
		for _, v := range e.Values {
			fg.doc(v.Doc)
			fg.p("%s %s = %d", fg.g.names[v], name, v.Value)
		}
		fg.p(")")
		fg.p("")
	}
	// Members sharing a value: the first one names it.
	var uniq []*thrift.EnumValue
	seen := map[int64]bool{}
	for _, v := range e.Values {
		if !seen[v.Value] {
			seen[v.Value] = true
			uniq = append(uniq, v)
		}
	}
	fg.p("// String returns the member's IDL name, or \"<UNSET>\" for a value that is not a member.")
	fg.p("func (p %s) String() string {", name)
	if len(uniq) > 0 {
		fg.p("switch p {")
		for _, v := range uniq {
			fg.p("case %s:", fg.g.names[v])
			fg.p("return %q", v.Name)
		}
		fg.p("}")
	}
	fg.p("return \"<UNSET>\"")
	fg.p("}")
	fg.p("")
	from := fg.g.names[key{e, "FromString"}]
	fg.p("// %s returns the member of %s whose IDL name is s.", from, name)
	fg.p("func %s(s string) (%s, error) {", from, name)
	if len(e.Values) > 0 {
		fg.p("switch s {")
		for _, v := range e.Values {
			fg.p("case %q:", v.Name)
			fg.p("return %s, nil", fg.g.names[v])
		}
		fg.p("}")
	}
	fg.p("return %s(0), fmt.Errorf(\"not a valid %s string: %%q\", s)", name, name)
	fg.p("}")
	fg.p("")
	fg.p("// Ptr returns a pointer to a copy of p, for optional fields.")
	fg.p("func (p %s) Ptr() *%s { return &p }", name, name)
	fg.p("")
	// A value that is not a member (zero when no member is, or one a newer
	// peer added) is written as its number, which UnmarshalText reads back:
	// "<UNSET>" would lose it, and encoding/json could not read it again.
	sc := fg.stdAlias("strconv", "strconv")
	fg.p("// MarshalText returns the member's IDL name, or the decimal number of a")
	fg.p("// value that is not a member.")
	fg.p("func (p %s) MarshalText() ([]byte, error) {", name)
	fg.p("if s := p.String(); s != \"<UNSET>\" { return []byte(s), nil }") // no IDL name has '<'
	fg.p("return %s.AppendInt(nil, int64(p), 10), nil", sc)
	fg.p("}")
	fg.p("")
	fg.p("// UnmarshalText sets p to the member named by text, or to the value of a")
	fg.p("// decimal number (as MarshalText writes a value that is not a member);")
	fg.p("// a number an i32 cannot hold, which would go on the wire as another")
	fg.p("// value, is an error.")
	fg.p("func (p *%s) UnmarshalText(text []byte) error {", name)
	fg.p("v, err := %s(string(text))", from)
	fg.p("if err != nil {")
	fg.p("n, nerr := %s.ParseInt(string(text), 10, 32)", sc)
	fg.p("if nerr != nil { return err }")
	fg.p("v = %s(n)", name)
	fg.p("}")
	fg.p("*p = v")
	fg.p("return nil")
	fg.p("}")
	fg.p("")
}

// fieldGoName returns the Go name of field fl of struct s.
func (fg *fileGen) fieldGoName(s *thrift.Struct, fl *thrift.Field) string {
	return fg.g.fieldGoName(s, fl)
}

// fieldGoName returns the Go name of field fl of struct s, naming every
// field of s the first time it is asked about s.
func (g *generator) fieldGoName(s *thrift.Struct, fl *thrift.Field) string {
	names, ok := g.fieldNames[s]
	if !ok {
		names = structFieldNames(s)
		g.fieldNames[s] = names
	}
	if name, ok := names[fl]; ok {
		return name
	}
	return thrift.GoFieldName(fl.Name)
}

// structFieldNames gives the fields of s their Go names: GoFieldName, with
// "_" appended while the name is a method of generated structs, or is,
// or has as its Get or IsSet accessor, the name or an accessor of another
// field. Appending "_" can make a name that of another field
// (init_default and init_default_ both give InitDefault_), so the fields
// are named in order, each avoiding the names the ones before it took.
func structFieldNames(s *thrift.Struct) map[*thrift.Field]string {
	out := make(map[*thrift.Field]string, len(s.Fields))
	used := map[string]bool{} // fields named so far and their accessors
	for _, fl := range s.Fields {
		name := thrift.GoFieldName(fl.Name)
		for extraMethods[name] || thrift.IsReservedMethodName(name) || clashesWithAccessor(s, fl, name) ||
			used[name] || used["Get"+name] || used["IsSet"+name] {
			name += "_"
		}
		used[name], used["Get"+name], used["IsSet"+name] = true, true, true
		out[fl] = name
	}
	return out
}

// extraMethods are methods the generator defines on structs, in case
// idl/thrift does not reserve them (InitDefault it does not: a field
// init_default becomes InitDefault_). TestFieldsNeverNameMethods checks
// that every method the generator emits on a struct is here or reserved.
var extraMethods = map[string]bool{
	"FastReadDepth": true, "BLengthCompact": true, "FastWriteCompact": true,
	"FastReadCompact": true, "FastReadDepthCompact": true, "InitDefault": true,
	"FastReadWhole": true, "FastReadWholeCompact": true,
}

// clashesWithAccessor reports whether name, the Go name of fl, is also the
// getter or IsSet method of another field of s.
func clashesWithAccessor(s *thrift.Struct, fl *thrift.Field, name string) bool {
	if !strings.HasPrefix(name, "Get") && !strings.HasPrefix(name, "IsSet") {
		return false
	}
	for _, o := range s.Fields {
		if o == fl {
			continue
		}
		on := thrift.GoFieldName(o.Name)
		if name == "Get"+on || name == "IsSet"+on {
			return true
		}
	}
	return false
}
