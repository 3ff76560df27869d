package thrift

import (
	"math"
	"path"
	"strconv"
	"strings"
)

// keywords may not be used as names.
var keywords = map[string]bool{
	"include": true, "cpp_include": true, "namespace": true, "typedef": true,
	"const": true, "enum": true, "struct": true, "union": true, "exception": true,
	"service": true, "extends": true, "oneway": true, "throws": true, "void": true,
	"required": true, "optional": true, "bool": true, "byte": true, "i8": true,
	"i16": true, "i32": true, "i64": true, "double": true, "string": true,
	"binary": true, "uuid": true, "list": true, "set": true, "map": true,
	"true": true, "false": true, "cpp_type": true,
	// Deprecated or removed forms, rejected where they would apply.
	"senum": true, "slist": true, "async": true, "xsd_all": true,
	"xsd_optional": true, "xsd_nillable": true, "xsd_attrs": true,
	"xsd_namespace": true, "php_namespace": true, "cpp_namespace": true,
	"java_package": true, "cocoa_prefix": true, "csharp_namespace": true,
	"delphi_namespace": true, "perl_package": true, "py_module": true,
	"ruby_namespace": true, "smalltalk_category": true, "smalltalk_prefix": true,
	"smalltalk.category": true, "smalltalk.prefix": true,
}

// definitionWords start a header or definition; met inside a body they mean
// the body was not closed.
var definitionWords = map[string]bool{
	"include": true, "cpp_include": true, "namespace": true, "typedef": true,
	"const": true, "enum": true, "struct": true, "union": true,
	"exception": true, "service": true,
}

var baseTypes = map[string]TypeKind{
	"bool": TypeBool, "byte": TypeI8, "i8": TypeI8, "i16": TypeI16, "i32": TypeI32,
	"i64": TypeI64, "double": TypeDouble, "string": TypeString, "binary": TypeBinary,
	"uuid": TypeUUID,
}

// bailout unwinds the parser after the first syntax error; parse recovers it.
type bailout struct{}

type parser struct {
	lx       *lexer
	tok      token
	file     *File
	depth    int
	maxDepth int
	err      *Error
}

// includeName is the name by which a file at path p is included: its base
// name without its extension, whatever it is (shared.idl is "shared"), as
// Apache's compiler names it.
func includeName(p string) string {
	base := path.Base(strings.ReplaceAll(p, "\\", "/"))
	if i := strings.LastIndexByte(base, '.'); i > 0 {
		return base[:i]
	}
	return base
}

// parse parses one file's syntax. It does not read includes or resolve
// names. On a syntax error it returns the file parsed so far and the error.
func parse(name string, src []byte, maxDepth int) (f *File, err *Error) {
	f = &File{
		Path:       name,
		Name:       includeName(name),
		IncludeMap: map[string]*File{},
		Namespaces: map[string]string{},
	}
	p := &parser{lx: newLexer(name, src), file: f, maxDepth: maxDepth}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok {
				panic(r)
			}
			err = p.err
		}
	}()
	p.next()
	p.parseDocument()
	return f, nil
}

func (p *parser) next() {
	p.tok = p.lx.next()
	if p.lx.err != nil {
		p.err = p.lx.err
		panic(bailout{})
	}
}

func (p *parser) failAt(pos Pos, msg string) {
	if p.err == nil {
		p.err = &Error{Pos: pos, Msg: msg}
	}
	panic(bailout{})
}

func (p *parser) unexpected(want string) {
	p.failAt(p.tok.pos, "expected "+want+", found "+p.tok.describe())
}

func (p *parser) is(punct string) bool {
	return p.tok.kind == tokPunct && p.tok.text == punct
}

func (p *parser) isWord(w string) bool {
	return p.tok.kind == tokIdent && p.tok.text == w
}

func (p *parser) accept(punct string) bool {
	if p.is(punct) {
		p.next()
		return true
	}
	return false
}

func (p *parser) expect(punct, context string) Pos {
	pos := p.tok.pos
	if !p.is(punct) {
		p.unexpected("'" + punct + "' " + context)
	}
	p.next()
	return pos
}

// name reads the name of a definition, field, value or function.
func (p *parser) name(what string) (string, Pos) {
	t := p.tok
	if t.kind != tokIdent {
		p.unexpected(what + " name")
	}
	if keywords[t.text] {
		p.failAt(t.pos, "cannot use keyword "+strconv.Quote(t.text)+" as "+what+" name")
	}
	if strings.Contains(t.text, ".") {
		p.failAt(t.pos, what+" name "+strconv.Quote(t.text)+" must not contain '.'")
	}
	p.next()
	return t.text, t.pos
}

// separator skips an optional ',' or ';'.
func (p *parser) separator() {
	if p.is(",") || p.is(";") {
		p.next()
	}
}

func (p *parser) literal(context string) (string, Pos) {
	t := p.tok
	if t.kind != tokString {
		p.unexpected("string literal " + context)
	}
	p.next()
	return t.str, t.pos
}

var deprecatedHeaders = map[string]bool{
	"php_namespace": true, "xsd_namespace": true, "cpp_namespace": true,
	"java_package": true, "cocoa_prefix": true, "csharp_namespace": true,
	"delphi_namespace": true, "perl_package": true, "py_module": true,
	"ruby_namespace": true, "smalltalk_category": true, "smalltalk_prefix": true,
	"smalltalk.category": true, "smalltalk.prefix": true,
}

func (p *parser) parseDocument() {
	f := p.file
	first := true
	seenDef := false
	for p.tok.kind != tokEOF {
		t := p.tok
		if t.kind != tokIdent {
			p.unexpected("a header or definition")
		}
		switch t.text {
		case "include", "cpp_include", "namespace":
			if seenDef {
				p.failAt(t.pos, t.text+" must come before all definitions")
			}
			if first {
				f.Doc = t.doc
			}
			p.parseHeader()
		case "typedef", "const", "enum", "struct", "union", "exception", "service":
			seenDef = true
			d := p.parseDefinition()
			f.Decls = append(f.Decls, d)
		case "senum":
			p.failAt(t.pos, "senum is deprecated and not supported; use typedef string or an enum")
		default:
			if deprecatedHeaders[t.text] {
				p.failAt(t.pos, t.text+" is deprecated and not supported; use \"namespace <scope> <name>\"")
			}
			p.unexpected("a header or definition (include, namespace, typedef, const, enum, struct, union, exception, service)")
		}
		first = false
	}
}

func (p *parser) parseHeader() {
	f := p.file
	t := p.tok
	p.next()
	switch t.text {
	case "include":
		s, _ := p.literal("after include")
		if s == "" {
			p.failAt(t.pos, "include path is empty")
		}
		f.Includes = append(f.Includes, &Include{
			Pos:  t.pos,
			Path: s,
			Name: includeName(s),
		})
	case "cpp_include":
		s, _ := p.literal("after cpp_include")
		f.CppIncludes = append(f.CppIncludes, s)
	case "namespace":
		var scope string
		switch {
		case p.is("*"):
			scope = "*"
			p.next()
		case p.tok.kind == tokIdent:
			scope = p.tok.text
			p.next()
		default:
			p.unexpected("namespace scope (a language such as go, or *)")
		}
		if p.tok.kind != tokIdent {
			p.unexpected("namespace name after \"namespace " + scope + "\"")
		}
		ns := &Namespace{Pos: t.pos, Scope: scope, Name: p.tok.text}
		p.next()
		ns.Annotations = p.annotations()
		f.NamespaceDecls = append(f.NamespaceDecls, ns)
		f.Namespaces[scope] = ns.Name
	}
	p.separator()
}

func (p *parser) parseDefinition() Decl {
	f := p.file
	t := p.tok
	p.next()
	var d Decl
	switch t.text {
	case "typedef":
		typ := p.parseType()
		name, _ := p.name("typedef")
		td := &Typedef{Pos: t.pos, Doc: t.doc, Name: name, Type: typ, File: f}
		td.Annotations = p.annotations()
		f.Typedefs = append(f.Typedefs, td)
		d = td
	case "const":
		typ := p.parseType()
		name, _ := p.name("const")
		p.expect("=", "after const name "+strconv.Quote(name))
		c := &Const{Pos: t.pos, Doc: t.doc, Name: name, Type: typ, File: f}
		c.Value = p.parseConstValue()
		c.Annotations = p.annotations()
		f.Consts = append(f.Consts, c)
		d = c
	case "enum":
		d = p.parseEnum(t)
	case "struct", "union", "exception":
		d = p.parseStruct(t)
	case "service":
		d = p.parseService(t)
	}
	p.separator()
	return d
}

func (p *parser) parseEnum(t token) *Enum {
	name, _ := p.name("enum")
	e := &Enum{Pos: t.pos, Doc: t.doc, Name: name, File: p.file}
	p.expect("{", "to open enum "+name)
	next := int64(0)
	for !p.is("}") {
		if p.tok.kind == tokEOF || (p.tok.kind == tokIdent && definitionWords[p.tok.text]) {
			p.unexpected("'}' to close enum " + name)
		}
		vt := p.tok
		vname, _ := p.name("enum value")
		v := &EnumValue{Pos: vt.pos, Doc: vt.doc, Name: vname, Enum: e}
		if p.accept("=") {
			if p.tok.kind != tokInt {
				p.unexpected("integer value for enum value " + vname)
			}
			v.Value = p.tok.ival
			v.Explicit = true
			if v.Value < -1<<31 || v.Value > 1<<31-1 {
				p.failAt(p.tok.pos, "enum value "+vname+" = "+p.tok.text+" does not fit in i32")
			}
			p.next()
		} else {
			v.Value = next
			if v.Value > 1<<31-1 {
				p.failAt(vt.pos, "implicit value of enum value "+vname+" does not fit in i32")
			}
		}
		next = v.Value + 1
		v.Annotations = p.annotations()
		p.separator()
		e.Values = append(e.Values, v)
	}
	p.next()
	e.Annotations = p.annotations()
	p.file.Enums = append(p.file.Enums, e)
	return e
}

func (p *parser) parseStruct(t token) *Struct {
	kind := map[string]StructKind{"struct": StructKindStruct, "union": StructKindUnion, "exception": StructKindException}[t.text]
	name, _ := p.name(t.text)
	s := &Struct{Pos: t.pos, Doc: t.doc, Kind: kind, Name: name, File: p.file}
	if p.isWord("xsd_all") {
		p.failAt(p.tok.pos, "xsd_all is deprecated and not supported")
	}
	p.expect("{", "to open "+t.text+" "+name)
	s.Fields = p.parseFields("}", t.text+" "+name)
	s.Annotations = p.annotations()
	switch kind {
	case StructKindStruct:
		p.file.Structs = append(p.file.Structs, s)
	case StructKindUnion:
		p.file.Unions = append(p.file.Unions, s)
	default:
		p.file.Exceptions = append(p.file.Exceptions, s)
	}
	return s
}

// parseFields parses fields up to and including the closing punctuation.
func (p *parser) parseFields(closing, context string) []*Field {
	var fields []*Field
	implicit := 0
	for !p.is(closing) {
		if p.tok.kind == tokEOF || (p.tok.kind == tokIdent && definitionWords[p.tok.text]) ||
			p.is(")") || p.is("}") {
			// A closing bracket of the other kind: the list was not closed.
			p.unexpected("'" + closing + "' to close " + context)
		}
		ft := p.tok
		f := &Field{Pos: ft.pos, Doc: ft.doc}
		if p.tok.kind == tokInt {
			idTok := p.tok
			p.next()
			p.expect(":", "after field id "+idTok.text)
			if idTok.ival < 1 || idTok.ival > 32767 {
				p.failAt(idTok.pos, "field id "+idTok.text+" is out of range: ids are 1 to 32767")
			}
			f.ID = int(idTok.ival)
			f.ExplicitID = true
		} else {
			implicit--
			f.ID = implicit
		}
		switch {
		case p.isWord("required"):
			f.Required = Required
			p.next()
		case p.isWord("optional"):
			f.Required = Optional
			p.next()
		}
		f.Type = p.parseType()
		if p.accept("&") {
			f.Reference = true
		}
		f.Name, _ = p.name("field")
		if f.ID < math.MinInt16 {
			p.failAt(f.Pos, "field "+strconv.Quote(f.Name)+" has no id, and the ids given to such fields (-1, -2, ...) end at -32768, the least i16: give it an id")
		}
		if p.accept("=") {
			f.Default = p.parseConstValue()
		}
		if p.tok.kind == tokIdent && strings.HasPrefix(p.tok.text, "xsd_") {
			p.failAt(p.tok.pos, p.tok.text+" is deprecated and not supported")
		}
		f.Annotations = p.annotations()
		p.separator()
		fields = append(fields, f)
	}
	p.next()
	return fields
}

func (p *parser) parseService(t token) *Service {
	name, _ := p.name("service")
	s := &Service{Pos: t.pos, Doc: t.doc, Name: name, File: p.file}
	if p.isWord("extends") {
		p.next()
		if p.tok.kind != tokIdent || keywords[p.tok.text] {
			p.unexpected("service name after extends")
		}
		s.Extends = p.tok.text
		s.ExtendsPos = p.tok.pos
		p.next()
	}
	p.expect("{", "to open service "+name)
	for !p.is("}") {
		if p.tok.kind == tokEOF || (p.tok.kind == tokIdent && definitionWords[p.tok.text]) {
			p.unexpected("'}' to close service " + name)
		}
		s.Functions = append(s.Functions, p.parseFunction(s))
	}
	p.next()
	s.Annotations = p.annotations()
	p.file.Services = append(p.file.Services, s)
	return s
}

func (p *parser) parseFunction(s *Service) *Function {
	t := p.tok
	fn := &Function{Pos: t.pos, Doc: t.doc, Service: s}
	switch {
	case p.isWord("oneway"):
		fn.Oneway = true
		p.next()
	case p.isWord("async"):
		p.failAt(t.pos, "async is deprecated and not supported; use oneway")
	}
	if p.isWord("void") {
		p.next()
	} else {
		fn.Result = p.parseType()
	}
	fn.Name, _ = p.name("function")
	p.expect("(", "to open the arguments of "+fn.Name)
	fn.Args = p.parseFields(")", "the arguments of "+fn.Name)
	if p.isWord("throws") {
		p.next()
		p.expect("(", "after throws")
		fn.Throws = p.parseFields(")", "the throws list of "+fn.Name)
	}
	fn.Annotations = p.annotations()
	p.separator()
	return fn
}

func (p *parser) enter(pos Pos, what string) {
	p.depth++
	if p.depth > p.maxDepth {
		p.failAt(pos, what+" nested more than "+strconv.Itoa(p.maxDepth)+" levels deep")
	}
}

func (p *parser) parseType() *Type {
	t := p.tok
	if t.kind != tokIdent {
		p.unexpected("a type")
	}
	p.enter(t.pos, "type")
	defer func() { p.depth-- }()
	typ := &Type{Pos: t.pos, Name: t.text}
	if k, ok := baseTypes[t.text]; ok {
		typ.Kind = k
		p.next()
		typ.Annotations = p.annotations()
		return typ
	}
	switch t.text {
	case "list":
		typ.Kind = TypeList
		p.next()
		p.expect("<", "after list")
		typ.Elem = p.parseType()
		p.expect(">", "to close list<")
		typ.CppType = p.cppType()
	case "set":
		typ.Kind = TypeSet
		p.next()
		typ.CppType = p.cppType()
		p.expect("<", "after set")
		typ.Elem = p.parseType()
		p.expect(">", "to close set<")
	case "map":
		typ.Kind = TypeMap
		p.next()
		typ.CppType = p.cppType()
		p.expect("<", "after map")
		typ.Key = p.parseType()
		p.expect(",", "between the key and value types of map<")
		typ.Elem = p.parseType()
		p.expect(">", "to close map<")
	case "slist":
		p.failAt(t.pos, "slist is deprecated and not supported; use list<string>")
	case "senum":
		p.failAt(t.pos, "senum is deprecated and not supported")
	default:
		if keywords[t.text] {
			p.failAt(t.pos, "expected a type, found keyword "+strconv.Quote(t.text))
		}
		typ.Kind = TypeNamed
		p.next()
	}
	typ.Annotations = p.annotations()
	return typ
}

func (p *parser) cppType() string {
	if !p.isWord("cpp_type") {
		return ""
	}
	p.next()
	s, _ := p.literal("after cpp_type")
	return s
}

// annotations parses an optional `( key = "value", ... )` list.
func (p *parser) annotations() Annotations {
	if !p.is("(") {
		return nil
	}
	p.next()
	as := Annotations{}
	for !p.is(")") {
		t := p.tok
		if t.kind != tokIdent {
			p.unexpected("annotation name or ')'")
		}
		p.next()
		a := Annotation{Pos: t.pos, Key: t.text, Value: "1"}
		if p.accept("=") {
			a.Value, _ = p.literal("as the value of annotation " + strconv.Quote(t.text))
		}
		as = append(as, a)
		p.separator()
	}
	p.next()
	return as
}

func (p *parser) parseConstValue() *ConstValue {
	t := p.tok
	p.enter(t.pos, "constant")
	defer func() { p.depth-- }()
	v := &ConstValue{Pos: t.pos}
	switch t.kind {
	case tokInt:
		v.Kind = ConstInt
		v.Int = t.ival
	case tokDouble:
		v.Kind = ConstDouble
		v.Double = t.fval
	case tokString:
		v.Kind = ConstString
		v.String = t.str
	case tokIdent:
		switch t.text {
		case "true":
			v.Kind, v.Bool, v.Int = ConstBool, true, 1
		case "false":
			v.Kind = ConstBool
		default:
			if keywords[t.text] {
				p.failAt(t.pos, "expected a constant value, found keyword "+strconv.Quote(t.text))
			}
			v.Kind = ConstIdent
			v.Ident = t.text
		}
	case tokPunct:
		switch t.text {
		case "[":
			p.next()
			v.Kind = ConstList
			v.List = []*ConstValue{}
			for !p.is("]") {
				if p.tok.kind == tokEOF {
					p.unexpected("']' to close the list constant opened at " + t.pos.String())
				}
				v.List = append(v.List, p.parseConstValue())
				p.separator()
			}
			p.next()
			return v
		case "{":
			p.next()
			v.Kind = ConstMap
			v.Map = []*ConstMapEntry{}
			for !p.is("}") {
				if p.tok.kind == tokEOF {
					p.unexpected("'}' to close the map constant opened at " + t.pos.String())
				}
				k := p.parseConstValue()
				p.expect(":", "between a map key and its value")
				val := p.parseConstValue()
				v.Map = append(v.Map, &ConstMapEntry{Key: k, Value: val})
				p.separator()
			}
			p.next()
			return v
		default:
			p.unexpected("a constant value")
		}
	default:
		p.unexpected("a constant value")
	}
	p.next()
	return v
}
