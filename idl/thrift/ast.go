// Package thrift is Petrel's front end for the Apache Thrift interface
// definition language: it reads .thrift files (and the files they include),
// resolves every name and checks the result, and hands the code generator a
// typed syntax tree ([File]) that needs no further look-ups.
//
// Start with [ParseFile]; [Parse] parses a file held in memory. Every node
// carries its [Pos]; every error names the file, line and column. [GoName] and
// [GoFieldName] give the Go identifiers the generator uses, and the checks
// reject IDL whose names would clash after that mapping.
package thrift

import (
	"fmt"
	"strconv"
	"strings"
)

// Pos is a position in a source file. Line and Col count from 1; Col counts
// bytes.
type Pos struct {
	File string
	Line int
	Col  int
}

// String returns "file:line:col", or just "file" for a position with no
// line (Line 0: the file as a whole, as for a file that cannot be read).
func (p Pos) String() string {
	if p.Line == 0 {
		return p.File
	}
	return p.File + ":" + strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Col)
}

// Before reports whether p sorts before q (by file, then line, then column).
func (p Pos) Before(q Pos) bool {
	if p.File != q.File {
		return p.File < q.File
	}
	if p.Line != q.Line {
		return p.Line < q.Line
	}
	return p.Col < q.Col
}

// Annotation is one `key = "value"` pair from a parenthesised annotation list.
// A key written without a value (`(cpp.noexcept)`) has Value "1", as Apache
// Thrift gives it.
type Annotation struct {
	Pos   Pos
	Key   string
	Value string
}

// Annotations is an annotation list in source order. Keys may repeat.
type Annotations []Annotation

// Get returns the value of the last annotation named key.
func (as Annotations) Get(key string) (string, bool) {
	for i := len(as) - 1; i >= 0; i-- {
		if as[i].Key == key {
			return as[i].Value, true
		}
	}
	return "", false
}

// File is one parsed .thrift file. Includes point at other parsed Files; a
// file included from several places is parsed once and shared.
type File struct {
	// Path is the file's path as opened (cleaned); for [Parse], the name given.
	Path string
	// Name is the include name other files use for it: the base name without
	// the ".thrift" extension.
	Name string
	// Doc is the doc comment before the first header or definition, if it is
	// followed by a blank line or by a header (not attached to a definition).
	Doc string

	// Includes in source order; Include.File is the parsed file.
	Includes []*Include
	// IncludeMap maps an include name (the name used in qualified references
	// such as `shared.Base`) to the included file.
	IncludeMap map[string]*File
	// CppIncludes holds the strings of `cpp_include` headers, in order.
	CppIncludes []string
	// Namespaces maps a scope ("go", "java", "*", ...) to the namespace name.
	// NamespaceDecls keeps the declarations in source order with positions.
	Namespaces     map[string]string
	NamespaceDecls []*Namespace

	// Decls holds every definition in declaration order. The typed slices
	// below hold the same nodes by kind, each in declaration order.
	Decls      []Decl
	Typedefs   []*Typedef
	Consts     []*Const
	Enums      []*Enum
	Structs    []*Struct // Kind == StructKindStruct
	Unions     []*Struct // Kind == StructKindUnion
	Exceptions []*Struct // Kind == StructKindException
	Services   []*Service
}

// Namespace returns the namespace declared for scope, falling back to the
// "*" scope, and "" if neither is declared.
func (f *File) Namespace(scope string) string {
	if ns, ok := f.Namespaces[scope]; ok {
		return ns
	}
	return f.Namespaces["*"]
}

// Lookup finds a definition of this file by its unqualified name.
func (f *File) Lookup(name string) Decl {
	for _, d := range f.Decls {
		if d.DeclName() == name {
			return d
		}
	}
	return nil
}

// Include is an `include "path"` header.
type Include struct {
	Pos  Pos
	Path string // as written in the IDL
	Name string // include name: base name of Path without ".thrift"
	File *File  // the parsed file
}

// Namespace is a `namespace scope name` header.
type Namespace struct {
	Pos         Pos
	Scope       string // "go", "java", "*", ...
	Name        string
	Annotations Annotations
}

// DeclKind says which kind of definition a [Decl] is.
type DeclKind int

// Kinds of definitions.
const (
	DeclTypedef DeclKind = iota + 1
	DeclConst
	DeclEnum
	DeclStruct // struct, union and exception
	DeclService
)

// Decl is a top-level definition: *Typedef, *Const, *Enum, *Struct or
// *Service.
type Decl interface {
	DeclName() string
	DeclPos() Pos
	DeclFile() *File
	DeclKind() DeclKind
	DeclDoc() string
}

// Typedef is `typedef Type Name`.
type Typedef struct {
	Pos         Pos
	Doc         string
	Name        string
	Type        *Type
	Annotations Annotations
	File        *File
}

// Const is `const Type Name = Value`.
type Const struct {
	Pos         Pos
	Doc         string
	Name        string
	Type        *Type
	Value       *ConstValue
	Annotations Annotations
	File        *File
}

// Enum is an enum definition.
type Enum struct {
	Pos         Pos
	Doc         string
	Name        string
	Values      []*EnumValue
	Annotations Annotations
	File        *File
}

// Value returns the enum value called name, or nil.
func (e *Enum) Value(name string) *EnumValue {
	for _, v := range e.Values {
		if v.Name == name {
			return v
		}
	}
	return nil
}

// EnumValue is one member of an enum. Without an explicit value a member
// takes the previous member's value plus one (0 for the first).
type EnumValue struct {
	Pos         Pos
	Doc         string
	Name        string
	Value       int64 // fits in int32 (checked)
	Explicit    bool  // the value was written in the IDL
	Annotations Annotations
	Enum        *Enum // the enum it belongs to
}

// StructKind says whether a [Struct] is a struct, union or exception.
type StructKind int

// Kinds of structs.
const (
	StructKindStruct StructKind = iota + 1
	StructKindUnion
	StructKindException
)

// String returns the IDL keyword: "struct", "union" or "exception".
func (k StructKind) String() string {
	switch k {
	case StructKindStruct:
		return "struct"
	case StructKindUnion:
		return "union"
	case StructKindException:
		return "exception"
	}
	return "StructKind(" + strconv.Itoa(int(k)) + ")"
}

// Struct is a struct, union or exception definition.
type Struct struct {
	Pos         Pos
	Doc         string
	Kind        StructKind
	Name        string
	Fields      []*Field
	Annotations Annotations
	File        *File
}

// Field returns the field called name, or nil.
func (s *Struct) Field(name string) *Field {
	for _, f := range s.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// Requiredness is a field's `required` / `optional` marker.
type Requiredness int

// Field requiredness. Default is "neither keyword written".
const (
	Default Requiredness = iota
	Required
	Optional
)

// String returns "required", "optional" or "default".
func (r Requiredness) String() string {
	switch r {
	case Required:
		return "required"
	case Optional:
		return "optional"
	}
	return "default"
}

// Field is a struct, union or exception field, a function argument or a
// `throws` entry.
type Field struct {
	Pos Pos
	Doc string
	// ID is the field id. Without an explicit id the parser assigns negative
	// ids counting down from -1 in the order such fields appear, as Apache
	// Thrift does.
	ID         int
	ExplicitID bool
	Name       string
	Type       *Type
	Required   Requiredness
	// Reference is set when the field was marked with '&' (a C++ reference
	// hint; it does not change the wire format).
	Reference   bool
	Default     *ConstValue // nil if none
	Annotations Annotations
}

// Service is a service definition.
type Service struct {
	Pos         Pos
	Doc         string
	Name        string
	Extends     string   // as written (may be qualified: "shared.Base"); "" if none
	ExtendsPos  Pos      // position of the Extends name
	Base        *Service // the resolved service named by Extends
	Functions   []*Function
	Annotations Annotations
	File        *File
}

// Function returns the function called name declared in this service (not
// its bases), or nil.
func (s *Service) Function(name string) *Function {
	for _, f := range s.Functions {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// Function is one method of a service.
type Function struct {
	Pos         Pos
	Doc         string
	Name        string
	Oneway      bool
	Result      *Type // nil for void
	Args        []*Field
	Throws      []*Field
	Annotations Annotations
	Service     *Service // the service it belongs to
}

// Void reports whether the function returns nothing.
func (f *Function) Void() bool { return f.Result == nil }

// TypeKind classifies a [Type].
type TypeKind int

// Kinds of types. TypeNamed is a reference to a typedef, enum or struct,
// resolved to it after parsing.
const (
	TypeInvalid TypeKind = iota
	TypeBool
	TypeI8 // written "byte" or "i8"
	TypeI16
	TypeI32
	TypeI64
	TypeDouble
	TypeString
	TypeBinary
	TypeUUID
	TypeList
	TypeSet
	TypeMap
	TypeNamed
)

var typeKindNames = [...]string{
	TypeInvalid: "invalid", TypeBool: "bool", TypeI8: "i8", TypeI16: "i16",
	TypeI32: "i32", TypeI64: "i64", TypeDouble: "double", TypeString: "string",
	TypeBinary: "binary", TypeUUID: "uuid", TypeList: "list", TypeSet: "set",
	TypeMap: "map", TypeNamed: "named",
}

// String returns the IDL name of the kind ("i32", "list", ... "named").
func (k TypeKind) String() string {
	if k >= 0 && int(k) < len(typeKindNames) {
		return typeKindNames[k]
	}
	return "TypeKind(" + strconv.Itoa(int(k)) + ")"
}

// IsBase reports whether k is one of the base types.
func (k TypeKind) IsBase() bool { return k >= TypeBool && k <= TypeUUID }

// IsContainer reports whether k is list, set or map.
func (k TypeKind) IsContainer() bool { return k == TypeList || k == TypeSet || k == TypeMap }

// Type is a type expression: a base type, a container, or a named reference.
type Type struct {
	Pos  Pos
	Kind TypeKind
	// Name is the type as written for base and named types ("byte", "i32",
	// "Foo", "shared.Foo"), and "list", "set" or "map" for containers.
	Name string
	// Key is the key type of a map.
	Key *Type
	// Elem is the element type of a list or set, and the value type of a map.
	Elem *Type
	// CppType is the string of a `cpp_type "..."` clause on a container.
	CppType     string
	Annotations Annotations
	// Ref is the declaration a TypeNamed refers to: a *Typedef, *Enum or
	// *Struct, possibly in an included file. Nil for other kinds.
	Ref Decl
}

// Resolved follows typedefs: it returns the type itself unless it names a
// typedef, in which case it returns the typedef's type, resolved in turn.
// The result is a base type, a container, or a TypeNamed whose Ref is an
// *Enum or *Struct. Chains of any length are followed to their end.
// Typedef cycles are rejected by the checks; should one reach here anyway,
// Resolved stops and returns a type of the cycle.
func (t *Type) Resolved() *Type {
	slow := t // moves at half speed: t meets it only in a cycle
	for i := 0; t != nil; i++ {
		td, ok := t.Ref.(*Typedef)
		if !ok || td.Type == nil {
			return t
		}
		t = td.Type
		if i%2 == 1 {
			slow = slow.Ref.(*Typedef).Type
		}
		if t == slow {
			return t
		}
	}
	return t
}

// Typedef returns the typedef t names directly, or nil.
func (t *Type) Typedef() *Typedef {
	td, _ := t.Ref.(*Typedef)
	return td
}

// Enum returns the enum t denotes after following typedefs, or nil.
func (t *Type) Enum() *Enum {
	e, _ := t.Resolved().Ref.(*Enum)
	return e
}

// Struct returns the struct, union or exception t denotes after following
// typedefs, or nil.
func (t *Type) Struct() *Struct {
	s, _ := t.Resolved().Ref.(*Struct)
	return s
}

// String writes the type as IDL ("map<string,list<i32>>", "shared.Foo").
func (t *Type) String() string {
	if t == nil {
		return "void"
	}
	switch t.Kind {
	case TypeList, TypeSet:
		return t.Name + "<" + t.Elem.String() + ">"
	case TypeMap:
		return "map<" + t.Key.String() + "," + t.Elem.String() + ">"
	}
	return t.Name
}

// ConstKind classifies a [ConstValue].
type ConstKind int

// Kinds of constant values.
const (
	ConstInvalid ConstKind = iota
	ConstInt               // 42, -7, 0x1F; Int holds it
	ConstDouble            // 1.5, 1e9; Double holds it
	ConstString            // "text" or 'text'; String holds the decoded text
	ConstBool              // true or false; Bool holds it and Int holds 1 or 0
	ConstList              // [a, b]; List holds the elements
	ConstMap               // {k: v}; Map holds the entries in order
	ConstIdent             // Name, Enum.VALUE, inc.Enum.VALUE, inc.CONST
)

var constKindNames = [...]string{
	ConstInvalid: "invalid", ConstInt: "int", ConstDouble: "double",
	ConstString: "string", ConstBool: "bool", ConstList: "list",
	ConstMap: "map", ConstIdent: "identifier",
}

// String names the kind ("int", "list", ...).
func (k ConstKind) String() string {
	if k >= 0 && int(k) < len(constKindNames) {
		return constKindNames[k]
	}
	return "ConstKind(" + strconv.Itoa(int(k)) + ")"
}

// ConstValue is a constant expression: a const's value or a field default.
type ConstValue struct {
	Pos    Pos
	Kind   ConstKind
	Int    int64
	Double float64
	String string
	Bool   bool
	List   []*ConstValue
	Map    []*ConstMapEntry
	// Ident is the identifier as written, for ConstIdent.
	Ident string
	// For ConstIdent, after resolution exactly one of EnumValue and Const is
	// set: the enum member or the constant the identifier names.
	EnumValue *EnumValue
	Const     *Const
}

// ConstMapEntry is one `key: value` pair of a map constant.
type ConstMapEntry struct {
	Key   *ConstValue
	Value *ConstValue
}

// Target follows ConstIdent references to constants and returns the value
// they end at: a literal, or a ConstIdent naming an enum value. Chains of
// any length are followed to their end. Reference cycles are rejected by
// the checks; should one reach here anyway, Target stops and returns a
// value of the cycle.
func (v *ConstValue) Target() *ConstValue {
	slow := v // moves at half speed: v meets it only in a cycle
	for i := 0; v != nil; i++ {
		if v.Kind != ConstIdent || v.Const == nil || v.Const.Value == nil {
			return v
		}
		v = v.Const.Value
		if i%2 == 1 {
			slow = slow.Const.Value
		}
		if v == slow {
			return v
		}
	}
	return v
}

// IDLString writes the value back as IDL, for messages and debugging.
func (v *ConstValue) IDLString() string {
	if v == nil {
		return "<nil>"
	}
	var b strings.Builder
	v.write(&b)
	return b.String()
}

func (v *ConstValue) write(b *strings.Builder) {
	switch v.Kind {
	case ConstInt:
		b.WriteString(strconv.FormatInt(v.Int, 10))
	case ConstDouble:
		b.WriteString(strconv.FormatFloat(v.Double, 'g', -1, 64))
	case ConstString:
		b.WriteString(strconv.Quote(v.String))
	case ConstBool:
		b.WriteString(strconv.FormatBool(v.Bool))
	case ConstIdent:
		b.WriteString(v.Ident)
	case ConstList:
		b.WriteByte('[')
		for i, e := range v.List {
			if i > 0 {
				b.WriteString(", ")
			}
			e.write(b)
		}
		b.WriteByte(']')
	case ConstMap:
		b.WriteByte('{')
		for i, e := range v.Map {
			if i > 0 {
				b.WriteString(", ")
			}
			e.Key.write(b)
			b.WriteString(": ")
			e.Value.write(b)
		}
		b.WriteByte('}')
	default:
		fmt.Fprintf(b, "<%v>", v.Kind)
	}
}

// Decl methods.

func (d *Typedef) DeclName() string   { return d.Name }
func (d *Typedef) DeclPos() Pos       { return d.Pos }
func (d *Typedef) DeclFile() *File    { return d.File }
func (d *Typedef) DeclKind() DeclKind { return DeclTypedef }
func (d *Typedef) DeclDoc() string    { return d.Doc }

func (d *Const) DeclName() string   { return d.Name }
func (d *Const) DeclPos() Pos       { return d.Pos }
func (d *Const) DeclFile() *File    { return d.File }
func (d *Const) DeclKind() DeclKind { return DeclConst }
func (d *Const) DeclDoc() string    { return d.Doc }

func (d *Enum) DeclName() string   { return d.Name }
func (d *Enum) DeclPos() Pos       { return d.Pos }
func (d *Enum) DeclFile() *File    { return d.File }
func (d *Enum) DeclKind() DeclKind { return DeclEnum }
func (d *Enum) DeclDoc() string    { return d.Doc }

func (d *Struct) DeclName() string   { return d.Name }
func (d *Struct) DeclPos() Pos       { return d.Pos }
func (d *Struct) DeclFile() *File    { return d.File }
func (d *Struct) DeclKind() DeclKind { return DeclStruct }
func (d *Struct) DeclDoc() string    { return d.Doc }

func (d *Service) DeclName() string   { return d.Name }
func (d *Service) DeclPos() Pos       { return d.Pos }
func (d *Service) DeclFile() *File    { return d.File }
func (d *Service) DeclKind() DeclKind { return DeclService }
func (d *Service) DeclDoc() string    { return d.Doc }
