package gen

import (
	"sort"
	"strconv"

	"github.com/petrel-rpc/petrel/idl/thrift"
)

// genStruct writes a struct, union or exception: the type, its constructor,
// accessors, String (and Error for exceptions) and both codecs.
func (fg *fileGen) genStruct(s *thrift.Struct) {
	name := fg.g.names[s]
	fg.doc(s.Doc)
	if s.Kind == thrift.StructKindUnion {
		if s.Doc != "" {
			fg.p("//")
		}
		fg.p("// %s is a union: set at most one field.", name)
	}
	fg.p("type %s struct {", name)
	for _, fl := range s.Fields {
		fg.doc(fl.Doc)
		req := ""
		switch {
		case s.Kind == thrift.StructKindUnion || fl.Required == thrift.Optional:
			req = ",optional"
		case fl.Required == thrift.Required:
			req = ",required"
		}
		json := fl.Name
		if fieldOptional(s, fl) {
			json += ",omitempty"
		}
		fg.p("%s %s `thrift:\"%s,%d%s\" json:\"%s\"`", fg.fieldGoName(s, fl), fg.fieldGoType(s, fl), fl.Name, fl.ID, req, json)
	}
	if fg.g.opt.KeepUnknown {
		fg.p("// _unknownFields holds the fields the last read did not know, in the binary protocol; FastWrite writes them back.")
		fg.p("_unknownFields []byte")
		fg.p("// _unknownFieldsCompact holds them in the compact protocol (headers in the long form), for FastWriteCompact.")
		fg.p("_unknownFieldsCompact []byte")
	}
	fg.p("}")
	fg.p("")

	// Constructor.
	fg.p("// %s returns a new %s with the IDL's default values set.", fg.g.names[key{s, "New"}], name)
	fg.p("func %s() *%s {", fg.g.names[key{s, "New"}], name)
	fg.p("return &%s{", name)
	for _, fl := range s.Fields {
		if fl.Default != nil && !fieldOptional(s, fl) {
			fg.p("%s: %s,", fg.fieldGoName(s, fl), fg.constExpr(fl.Type, fl.Default))
		}
	}
	fg.p("}")
	fg.p("}")
	fg.p("")
	fg.p("// InitDefault sets p to a new %s with the IDL's default values.", name)
	fg.p("func (p *%s) InitDefault() {", name)
	fg.p("*p = %s{", name)
	for _, fl := range s.Fields {
		if fl.Default != nil && !fieldOptional(s, fl) {
			fg.p("%s: %s,", fg.fieldGoName(s, fl), fg.constExpr(fl.Type, fl.Default))
		}
	}
	fg.p("}")
	fg.p("}")
	fg.p("")

	// Defaults, then (raw from here on) accessors and codecs.
	for _, fl := range s.Fields {
		if dv := fg.g.names[key{fl, "DEFAULT"}]; dv != "" {
			gt := fg.goType(fl.Type, false)
			if fl.Default != nil {
				fg.p("var %s %s = %s", dv, gt, fg.constExpr(fl.Type, fl.Default))
			} else {
				fg.p("var %s %s", dv, gt)
			}
			fg.p("")
		}
	}
	fg.cut(false)
	for _, fl := range s.Fields {
		fn := fg.fieldGoName(s, fl)
		gt := fg.goType(fl.Type, false)
		if dv := fg.g.names[key{fl, "DEFAULT"}]; dv != "" {
			fg.p("// Get%s returns the value of %s, or %s when it is unset.", fn, fn, dv)
			fg.p("func (p *%s) Get%s() (v %s) {", name, fn, gt)
			if fieldPointer(s, fl) {
				fg.p("if p != nil && p.%s != nil { return *p.%s }", fn, fn)
			} else {
				fg.p("if p != nil && p.%s != nil { return p.%s }", fn, fn)
			}
			fg.p("return %s", dv)
			fg.p("}")
			fg.p("")
			fg.p("// IsSet%s reports whether %s is set.", fn, fn)
			fg.p("func (p *%s) IsSet%s() bool { return p != nil && p.%s != nil }", name, fn, fn)
			fg.p("")
			continue
		}
		fg.p("// Get%s returns the value of %s (the zero value if p is nil).", fn, fn)
		fg.p("func (p *%s) Get%s() (v %s) {", name, fn, gt)
		fg.p("if p != nil { return p.%s }", fn)
		fg.p("return")
		fg.p("}")
		fg.p("")
	}

	fg.p("// String returns a readable form of p, for logs and debugging.")
	fg.p("func (p *%s) String() string { return thrift.StructString(%s, p) }", name, strconv.Quote(name))
	fg.p("")
	if s.Kind == thrift.StructKindException {
		fg.p("// Error makes %s an error.", name)
		fg.p("func (p *%s) Error() string { return p.String() }", name)
		fg.p("")
	}

	fg.genValidate(s)
	fg.genBinaryCodec(s)
	fg.genCompactCodec(s)
	fg.cut(true)
}

// hasDefaults reports whether NewX sets any field of s.
func (fg *fileGen) hasDefaults(s *thrift.Struct) bool {
	for _, fl := range s.Fields {
		if fl.Default != nil && !fieldOptional(s, fl) {
			return true
		}
	}
	return false
}

// writeOrder returns the fields of s in the order they are written: by id.
func writeOrder(s *thrift.Struct) []*thrift.Field {
	fs := append([]*thrift.Field(nil), s.Fields...)
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].ID < fs[j].ID })
	return fs
}

// fieldValue returns the expression of field fl's value (dereferenced for
// pointer fields).
func (fg *fileGen) fieldValue(s *thrift.Struct, fl *thrift.Field) string {
	if fieldPointer(s, fl) {
		return "*p." + fg.fieldGoName(s, fl)
	}
	return "p." + fg.fieldGoName(s, fl)
}

// itoa is strconv.Itoa.
func itoa(n int) string { return strconv.Itoa(n) }
