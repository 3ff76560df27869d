package thrift_test

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/petrel-rpc/petrel/idl/thrift"
)

// dump writes a file and everything it includes as indented text, for the
// golden tests. Positions are written as line:col.
func dump(f *thrift.File) string {
	var b strings.Builder
	seen := map[*thrift.File]bool{}
	var walk func(f *thrift.File)
	walk = func(f *thrift.File) {
		if seen[f] {
			return
		}
		seen[f] = true
		dumpFile(&b, f)
		for _, inc := range f.Includes {
			walk(inc.File)
		}
	}
	walk(f)
	return b.String()
}

func pos(p thrift.Pos) string { return strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Col) }

func doc(b *strings.Builder, indent, d string) {
	if d != "" {
		fmt.Fprintf(b, "%sdoc %q\n", indent, d)
	}
}

func annots(as thrift.Annotations) string {
	if len(as) == 0 {
		return ""
	}
	var parts []string
	for _, a := range as {
		parts = append(parts, fmt.Sprintf("%s=%q@%s", a.Key, a.Value, pos(a.Pos)))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func typ(t *thrift.Type) string {
	if t == nil {
		return "void"
	}
	var s string
	switch t.Kind {
	case thrift.TypeList, thrift.TypeSet:
		s = t.Name + "<" + typ(t.Elem) + ">"
	case thrift.TypeMap:
		s = "map<" + typ(t.Key) + "," + typ(t.Elem) + ">"
	case thrift.TypeNamed:
		d := t.Ref
		s = fmt.Sprintf("%s{%s %s.%s", t.Name, kindOf(d), d.DeclFile().Name, d.DeclName())
		if t.Typedef() != nil {
			s += " => " + t.Resolved().String()
		}
		s += "}"
	default:
		s = t.Name + "{" + t.Kind.String() + "}"
	}
	if t.CppType != "" {
		s += " cpp_type " + strconv.Quote(t.CppType)
	}
	return s + annots(t.Annotations)
}

func kindOf(d thrift.Decl) string {
	switch d := d.(type) {
	case *thrift.Typedef:
		return "typedef"
	case *thrift.Enum:
		return "enum"
	case *thrift.Struct:
		return d.Kind.String()
	}
	return "?"
}

func value(v *thrift.ConstValue) string {
	if v == nil {
		return "-"
	}
	switch v.Kind {
	case thrift.ConstList:
		var parts []string
		for _, e := range v.List {
			parts = append(parts, value(e))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case thrift.ConstMap:
		var parts []string
		for _, e := range v.Map {
			parts = append(parts, value(e.Key)+": "+value(e.Value))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case thrift.ConstIdent:
		switch {
		case v.EnumValue != nil:
			return fmt.Sprintf("%s{enum value %s.%s=%d}", v.Ident, v.EnumValue.Enum.Name, v.EnumValue.Name, v.EnumValue.Value)
		case v.Const != nil:
			return fmt.Sprintf("%s{const %s.%s -> %s}", v.Ident, v.Const.File.Name, v.Const.Name, v.Target().IDLString())
		}
		return v.Ident + "{unresolved}"
	}
	return v.Kind.String() + " " + v.IDLString()
}

func fields(b *strings.Builder, indent string, fs []*thrift.Field) {
	for _, f := range fs {
		doc(b, indent, f.Doc)
		id := strconv.Itoa(f.ID)
		if !f.ExplicitID {
			id += "(implicit)"
		}
		ref := ""
		if f.Reference {
			ref = " &"
		}
		fmt.Fprintf(b, "%s%s field %s %s %s%s %s go=%s default=%s%s\n", indent, pos(f.Pos), id, f.Required,
			typ(f.Type), ref, f.Name, thrift.GoFieldName(f.Name), value(f.Default), annots(f.Annotations))
	}
}

func dumpFile(b *strings.Builder, f *thrift.File) {
	fmt.Fprintf(b, "file %s name=%s\n", f.Path, f.Name)
	doc(b, "  ", f.Doc)
	for _, inc := range f.Includes {
		fmt.Fprintf(b, "  %s include %q as %s -> %s\n", pos(inc.Pos), inc.Path, inc.Name, inc.File.Path)
	}
	for _, s := range f.CppIncludes {
		fmt.Fprintf(b, "  cpp_include %q\n", s)
	}
	for _, ns := range f.NamespaceDecls {
		fmt.Fprintf(b, "  %s namespace %s %s%s\n", pos(ns.Pos), ns.Scope, ns.Name, annots(ns.Annotations))
	}
	for _, d := range f.Decls {
		doc(b, "  ", d.DeclDoc())
		p := pos(d.DeclPos())
		switch d := d.(type) {
		case *thrift.Typedef:
			fmt.Fprintf(b, "  %s typedef %s go=%s = %s%s\n", p, d.Name, thrift.GoName(d.Name), typ(d.Type), annots(d.Annotations))
		case *thrift.Const:
			fmt.Fprintf(b, "  %s const %s %s go=%s = %s%s\n", p, typ(d.Type), d.Name, thrift.GoName(d.Name), value(d.Value), annots(d.Annotations))
		case *thrift.Enum:
			fmt.Fprintf(b, "  %s enum %s go=%s%s\n", p, d.Name, thrift.GoName(d.Name), annots(d.Annotations))
			for _, v := range d.Values {
				doc(b, "    ", v.Doc)
				fmt.Fprintf(b, "    %s %s = %d explicit=%v%s\n", pos(v.Pos), v.Name, v.Value, v.Explicit, annots(v.Annotations))
			}
		case *thrift.Struct:
			fmt.Fprintf(b, "  %s %s %s go=%s%s\n", p, d.Kind, d.Name, thrift.GoName(d.Name), annots(d.Annotations))
			fields(b, "    ", d.Fields)
		case *thrift.Service:
			ext := ""
			if d.Base != nil {
				ext = fmt.Sprintf(" extends %s{%s.%s}", d.Extends, d.Base.File.Name, d.Base.Name)
			}
			fmt.Fprintf(b, "  %s service %s go=%s%s%s\n", p, d.Name, thrift.GoName(d.Name), ext, annots(d.Annotations))
			for _, fn := range d.Functions {
				doc(b, "    ", fn.Doc)
				ow := ""
				if fn.Oneway {
					ow = "oneway "
				}
				fmt.Fprintf(b, "    %s %sfunction %s go=%s returns %s%s\n", pos(fn.Pos), ow, fn.Name, thrift.GoName(fn.Name), typ(fn.Result), annots(fn.Annotations))
				fields(b, "      arg ", fn.Args)
				fields(b, "      throws ", fn.Throws)
			}
		}
	}
}
