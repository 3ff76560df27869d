package thrift_test

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/idl/thrift"
)

// memFS serves files from a map, for Parse with includes.
func memFS(files map[string]string) func(string) ([]byte, error) {
	return func(path string) ([]byte, error) {
		if s, ok := files[path]; ok {
			return []byte(s), nil
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
}

func mustParse(t *testing.T, src string, opts thrift.ParseOptions) *thrift.File {
	t.Helper()
	f, err := thrift.Parse("mem/main.thrift", []byte(src), opts)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return f
}

func parseErr(t *testing.T, src string) string {
	t.Helper()
	_, err := thrift.Parse("m.thrift", []byte(src), thrift.ParseOptions{})
	if err == nil {
		t.Fatalf("Parse(%q) succeeded, want an error", src)
	}
	return err.Error()
}

func TestDiamondIncludeParsedOnce(t *testing.T) {
	files := map[string]string{
		"mem/a.thrift":          `include "base.thrift" struct A { 1: base.B b }`,
		"mem/c.thrift":          `include "base.thrift" struct C { 1: base.B b }`,
		"lib/base.thrift":       `struct B { 1: i32 x }`,
		"mem/unused/x.thrift":   `struct X {}`,
		"mem/base.thrift.extra": ``,
	}
	f := mustParse(t, `include "a.thrift" include "c.thrift" struct M { 1: a.A a 2: c.C c }`,
		thrift.ParseOptions{IncludeDirs: []string{"lib"}, ReadFile: memFS(files)})
	a, c := f.IncludeMap["a"], f.IncludeMap["c"]
	if a == nil || c == nil {
		t.Fatalf("IncludeMap = %v", f.IncludeMap)
	}
	if a.IncludeMap["base"] != c.IncludeMap["base"] || a.IncludeMap["base"].Path != "lib/base.thrift" {
		t.Fatalf("base.thrift not shared: %p %p", a.IncludeMap["base"], c.IncludeMap["base"])
	}
	bt := f.Structs[0].Field("a").Type.Struct().Field("b").Type
	if bt.Struct().Name != "B" || bt.Struct().File.Name != "base" {
		t.Fatalf("a.A.b resolves to %v", bt.Ref)
	}
}

func TestIncludeNameClash(t *testing.T) {
	files := map[string]string{"mem/x/util.thrift": ``, "mem/y/util.thrift": ``}
	_, err := thrift.Parse("mem/main.thrift", []byte("include \"x/util.thrift\"\ninclude \"y/util.thrift\"\n"),
		thrift.ParseOptions{ReadFile: memFS(files)})
	want := `mem/main.thrift:2:1: include name "util" is already used by the include of mem/x/util.thrift`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
}

func TestResolvedThroughTypedefs(t *testing.T) {
	f := mustParse(t, `
enum E { A = 1 }
struct S {}
typedef E E1
typedef E1 E2
typedef S S1
typedef list<E2> L
struct T { 1: E2 e 2: S1 s 3: L l 4: i32 n }
`, thrift.ParseOptions{})
	tt := f.Structs[1]
	e := tt.Field("e").Type
	if e.Typedef() == nil || e.Typedef().Name != "E2" || e.Enum() == nil || e.Enum().Name != "E" {
		t.Errorf("E2: typedef %v enum %v", e.Typedef(), e.Enum())
	}
	if r := e.Resolved(); r.Kind != thrift.TypeNamed || r.Ref != thrift.Decl(f.Enums[0]) {
		t.Errorf("E2 resolves to %v", r)
	}
	if s := tt.Field("s").Type.Struct(); s == nil || s.Name != "S" {
		t.Errorf("S1 struct = %v", s)
	}
	l := tt.Field("l").Type.Resolved()
	if l.Kind != thrift.TypeList || l.Elem.Enum() == nil {
		t.Errorf("L resolves to %v", l)
	}
	n := tt.Field("n").Type
	if n.Resolved() != n || n.Enum() != nil || n.Struct() != nil || n.Typedef() != nil || !n.Kind.IsBase() {
		t.Errorf("i32 helpers wrong")
	}
	if got := l.String(); got != "list<E2>" {
		t.Errorf("String = %q", got)
	}
}

func TestNamespacesAndLookup(t *testing.T) {
	f := mustParse(t, "namespace * all\nnamespace go a.b\nnamespace py.twisted tw\nstruct S {}", thrift.ParseOptions{})
	if f.Namespace("go") != "a.b" || f.Namespace("java") != "all" || f.Namespace("py.twisted") != "tw" {
		t.Errorf("Namespaces = %v", f.Namespaces)
	}
	if d := f.Lookup("S"); d == nil || d.DeclKind() != thrift.DeclStruct {
		t.Errorf("Lookup(S) = %v", d)
	}
	if f.Lookup("T") != nil {
		t.Error("Lookup(T) found something")
	}
}

func TestAnnotationsGet(t *testing.T) {
	f := mustParse(t, `struct S { 1: i32 a (k = "1", k = "2", flag) }`, thrift.ParseOptions{})
	as := f.Structs[0].Fields[0].Annotations
	if v, ok := as.Get("k"); !ok || v != "2" {
		t.Errorf("Get(k) = %q, %v", v, ok)
	}
	if v, ok := as.Get("flag"); !ok || v != "1" {
		t.Errorf("Get(flag) = %q, %v", v, ok)
	}
	if _, ok := as.Get("none"); ok {
		t.Error("Get(none) found")
	}
}

func TestConstTarget(t *testing.T) {
	f := mustParse(t, "const i32 A = 7\nconst i32 B = A\nconst i32 C = B", thrift.ParseOptions{})
	c := f.Consts[2].Value
	if c.Const != f.Consts[1] || c.Target().Kind != thrift.ConstInt || c.Target().Int != 7 {
		t.Errorf("C -> %v", c.Target().IDLString())
	}
}

func TestLexicalForms(t *testing.T) {
	f := mustParse(t, `
cpp_include "<vector>"
const i64 NEG_HEX = -0x10
const i64 POS = +5
const double E1 = -1.5e+3
const double E2 = .25
const string MULTI = "line1
line2"
struct S {
  1: list<i32> cpp_type "std::deque<int>" l
  2: map cpp_type "std::unordered_map" <i32, i32> m
  3: S & self_ref
}
`, thrift.ParseOptions{})
	if len(f.CppIncludes) != 1 || f.CppIncludes[0] != "<vector>" {
		t.Errorf("CppIncludes = %q", f.CppIncludes)
	}
	vals := []string{"-16", "5", "-1500", "0.25", `"line1\nline2"`}
	for i, want := range vals {
		if got := f.Consts[i].Value.IDLString(); got != want {
			t.Errorf("const %s = %s, want %s", f.Consts[i].Name, got, want)
		}
	}
	s := f.Structs[0]
	if s.Fields[0].Type.CppType != "std::deque<int>" || s.Fields[1].Type.CppType != "std::unordered_map" {
		t.Errorf("cpp_type not kept")
	}
	if !s.Fields[2].Reference || s.Fields[2].Type.Struct() != s {
		t.Errorf("& reference not kept")
	}
}

func TestSyntaxErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"struct S {}\ninclude \"x.thrift\"", "m.thrift:2:1: include must come before all definitions"},
		{"/* open", "m.thrift:1:1: comment not terminated: missing */"},
		{"const string S = \"open", "m.thrift:1:18: string literal not terminated"},
		{"const i64 X = 99999999999999999999", "m.thrift:1:15: integer constant 99999999999999999999 does not fit in 64 bits"},
		{"const double X = 1.", "m.thrift:1:18: malformed number \"1.\": a digit must follow '.'"},
		{"const i32 X = 0x", "m.thrift:1:15: hexadecimal constant has no digits"},
		{"struct struct {}", "m.thrift:1:8: cannot use keyword \"struct\" as struct name"},
		{"struct a.b {}", "m.thrift:1:8: struct name \"a.b\" must not contain '.'"},
		{"struct S { 1: slist x }", "m.thrift:1:15: slist is deprecated and not supported; use list<string>"},
		{"struct S xsd_all {}", "m.thrift:1:10: xsd_all is deprecated and not supported"},
		{"service S { async void f() }", "m.thrift:1:13: async is deprecated and not supported; use oneway"},
		{"php_namespace \"x\"", "m.thrift:1:1: php_namespace is deprecated and not supported; use \"namespace <scope> <name>\""},
		{"enum E { A = 4294967296 }", "m.thrift:1:14: enum value A = 4294967296 does not fit in i32"},
		{"struct S { 32768: i32 x }", "m.thrift:1:12: field id 32768 is out of range: ids are 1 to 32767"},
		{"struct S { 1: map<i32> m }", "m.thrift:1:22: expected ',' between the key and value types of map<, found \">\""},
		{"const i32 X = @", "m.thrift:1:15: unexpected character '@'"},
		{"struct S {\n\t1: i32 x = \xff\n}", "m.thrift:2:13: unexpected byte 0xff"},
		{"const list<i32> L = [1, 2", "m.thrift:1:26: expected ']' to close the list constant opened at m.thrift:1:21, found end of file"},
		{"enum E { A\nstruct S {}", "m.thrift:2:1: expected '}' to close enum E, found \"struct\""},
		{"union U { 1: i32 a } (x = 1)", "m.thrift:1:27: expected string literal as the value of annotation \"x\", found integer 1"},
		{"service S { void f() throws () }", ""},
	}
	for _, c := range cases {
		_, err := thrift.Parse("m.thrift", []byte(c.src), thrift.ParseOptions{})
		if c.want == "" {
			if err != nil {
				t.Errorf("Parse(%q): %v", c.src, err)
			}
			continue
		}
		if err == nil || err.Error() != c.want {
			t.Errorf("Parse(%q):\n got: %v\nwant: %s", c.src, err, c.want)
		}
	}
}

func TestMoreCheckErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"service A extends B {}\nservice B extends A {}", "m.thrift:2:19: service inheritance cycle: B -> A -> B"},
		{"service B { void f() }\nservice D extends B { void f() }", "m.thrift:2:23: function \"f\" of service D is already defined in its base service B at m.thrift:1:13"},
		// A base declared after its extender, whose own base is checked
		// later still.
		{"service C extends B { void f() }\nservice B extends A {}\nservice A { void f() }", "m.thrift:1:23: function \"f\" of service C is already defined in its base service A at m.thrift:3:13"},
		{"service B { void ping() }\nservice D extends B { void Ping() }", "m.thrift:2:23: function \"Ping\" of service D maps to Go name Ping, as does function \"ping\" of its base service B at m.thrift:1:13"},
		{"service S { void get_user()\n void getUser() }", "m.thrift:2:2: functions \"getUser\" and \"get_user\" (line 1) of service S both map to Go name GetUser"},
		{"enum E { A }\nenum F { B }\nconst E X = F.B", "m.thrift:3:13: value of const \"X\": F.B is a value of enum F, not of E"},
		{"enum E { A = 1 }\nconst E X = 3", "m.thrift:2:13: value of const \"X\": 3 is not a value of enum E"},
		{"const string S = \"x\"\nconst i32 X = S", "m.thrift:2:15: value of const \"X\": constant S has type string, which cannot be used as i32"},
		{"const i64 BIG = 300\nconst i8 X = BIG", "m.thrift:2:14: value of const \"X\": BIG = 300 does not fit in i8 (-128 to 127)"},
		{"struct S {}\nconst i32 X = S", "m.thrift:2:15: value of const \"X\": \"S\" is a struct, not a constant"},
		{"const i32 X = NOPE", "m.thrift:1:15: value of const \"X\": unknown constant \"NOPE\": no definition \"NOPE\" in m.thrift"},
		{"service S {}\nstruct T { 1: S s }", "m.thrift:2:15: \"S\" is a service, not a type"},
		{"struct S { 1: bool b = 2 }", "m.thrift:1:24: default value of field \"b\": expected bool, found int 2"},
		{"struct S { 1: list<i32> l = [1, \"x\"] }", "m.thrift:1:33: default value of field \"l\": expected i32, found string \"x\""},
		{"struct S { 1: i32 a }\nconst S V = {1: 2}", "m.thrift:2:14: value of const \"V\": a struct constant needs field names as keys, found int 1"},
		{"enum E { FOO_BAR, FooBar }", "m.thrift:1:19: enum values \"FooBar\" and \"FOO_BAR\" (line 1) of enum E both map to Go name FooBar"},
		{"exception E {}\nservice S { i32 f() throws (1: E success) }", "m.thrift:2:29: throws field \"success\" of S.f maps to Go name Success, which the generated result struct uses for the return value"},
		{"struct S { 1: i32 foo 2: i32 is_set_foo }", "m.thrift:1:23: field \"is_set_foo\" of struct S maps to Go name IsSetFoo, which is the IsSet method generated for field \"foo\""},
	}
	for _, c := range cases {
		_, err := thrift.Parse("m.thrift", []byte(c.src), thrift.ParseOptions{})
		if err == nil || err.Error() != c.want {
			t.Errorf("Parse(%q):\n got: %v\nwant: %s", c.src, err, c.want)
		}
	}
}

func TestMaxDepthOption(t *testing.T) {
	src := "const list<list<list<i32>>> X = [[[1]]]"
	if _, err := thrift.Parse("m.thrift", []byte(src), thrift.ParseOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := thrift.Parse("m.thrift", []byte(src), thrift.ParseOptions{MaxDepth: 2})
	if err == nil || err.Error() != "m.thrift:1:17: type nested more than 2 levels deep" {
		t.Fatalf("got %v", err)
	}
	deep := "const i32 X = " + strings.Repeat("[", 100000)
	if msg := parseErr(t, deep); msg != "m.thrift:1:79: constant nested more than 64 levels deep" {
		t.Fatalf("got %s", msg)
	}
}

func ExampleParse() {
	src := `
namespace go example.users

/** A user of the system. */
struct User {
  1: required i64 user_id
  2: optional string display_name = "anonymous"
}

service Users {
  User get(1: i64 user_id)
}
`
	f, err := thrift.Parse("users.thrift", []byte(src), thrift.ParseOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("go package:", f.Namespace("go"))
	for _, s := range f.Structs {
		fmt.Printf("%s (%s)\n", thrift.GoName(s.Name), s.Doc)
		for _, fd := range s.Fields {
			fmt.Printf("  %d %s %s %s = %s\n", fd.ID, fd.Required, fd.Type, thrift.GoFieldName(fd.Name), fd.Default.IDLString())
		}
	}
	fn := f.Services[0].Functions[0]
	fmt.Println(fn.Name, "returns", fn.Result.Struct().Name)
	// Output:
	// go package: example.users
	// User (A user of the system.)
	//   1 required i64 UserID = <nil>
	//   2 optional string DisplayName = "anonymous"
	// get returns User
}

func ExampleParse_errors() {
	src := "struct S {\n  1: i32 a\n  1: string b = 5\n}\n"
	_, err := thrift.Parse("s.thrift", []byte(src), thrift.ParseOptions{})
	fmt.Println(err)
	// Output:
	// s.thrift:3:3: duplicate field id 1 in struct S: already used by field "a" (line 2)
	// s.thrift:3:17: default value of field "b": expected string, found int 5
}

// TestMissingFileHasNoLine checks that an error about a whole file (here: it
// cannot be read) is printed as "file: message", without a made-up line and
// column 0:0 that editors would jump to.
func TestMissingFileHasNoLine(t *testing.T) {
	_, err := thrift.ParseFile("nope.thrift", thrift.ParseOptions{ReadFile: memFS(nil)})
	if err == nil {
		t.Fatal("ParseFile of a missing file succeeded")
	}
	if got := err.Error(); !strings.HasPrefix(got, "nope.thrift: cannot read IDL file: ") {
		t.Errorf("error = %q, want it to begin with \"nope.thrift: cannot read IDL file: \"", got)
	}
	if got := (thrift.Pos{File: "a.thrift", Line: 3, Col: 7}).String(); got != "a.thrift:3:7" {
		t.Errorf("Pos.String = %q, want a.thrift:3:7", got)
	}
}

// TestLongReferenceCycles checks that typedef and constant cycles are found
// however long they are: a cycle of 1500 passed the checks, and the
// generator then failed with unrelated errors or wrote Go that did not
// compile.
func TestLongReferenceCycles(t *testing.T) {
	const n = 1500
	var typedefs, consts strings.Builder
	fmt.Fprintf(&typedefs, "typedef T%d T0\n", n-1)
	fmt.Fprintf(&consts, "const i32 C%d = C0\n", n-1)
	for i := 0; i < n-1; i++ {
		fmt.Fprintf(&typedefs, "typedef T%d T%d\n", i, i+1)
		fmt.Fprintf(&consts, "const i32 C%d = C%d\n", i, i+1)
	}
	for _, c := range []struct{ src, want string }{
		{typedefs.String(), "m.thrift:1:1: typedef cycle: T0 -> T1499 -> T1498 -> "},
		{consts.String(), "m.thrift:1:1: constant cycle: C1499 -> C0 -> C1 -> "},
	} {
		_, err := thrift.Parse("m.thrift", []byte(c.src), thrift.ParseOptions{})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("error = %.200v, want one error beginning %q", err, c.want)
		} else if links := strings.Count(err.Error(), " -> "); links != n {
			t.Errorf("the cycle has %d links, want %d", links, n)
		}
	}
}

// TestImplicitFieldIDsFitI16 checks that fields without an id, which get
// -1, -2, ... as in Apache Thrift, are refused once the next id would not
// fit the i16 of the wire: the generator wrote such ids as int16 constants.
func TestImplicitFieldIDsFitI16(t *testing.T) {
	var b strings.Builder
	b.WriteString("struct A {\n")
	for i := 0; i < 32768; i++ {
		fmt.Fprintf(&b, "i32 f%d\n", i)
	}
	if _, err := thrift.Parse("m.thrift", []byte(b.String()+"}\n"), thrift.ParseOptions{}); err != nil {
		t.Fatalf("32768 fields without an id (down to -32768): %v", err)
	}
	b.WriteString("i32 last\n}\n")
	_, err := thrift.Parse("m.thrift", []byte(b.String()), thrift.ParseOptions{})
	if err == nil || !strings.Contains(err.Error(), "m.thrift:32770:1: ") || !strings.Contains(err.Error(), "field \"last\" has no id") {
		t.Fatalf("32769 fields without an id: err = %v, want one at the last field saying it has no id", err)
	}
}

// TestByteOrderMark checks that a UTF-8 byte order mark at the start of a
// file, which some editors write, is skipped (as the Go compiler does) and
// does not count in columns.
func TestByteOrderMark(t *testing.T) {
	f, err := thrift.Parse("m.thrift", []byte("\xef\xbb\xbfstruct A { 1: i32 x }\n"), thrift.ParseOptions{})
	if err != nil {
		t.Fatalf("file starting with a byte order mark: %v", err)
	}
	if len(f.Structs) != 1 || f.Structs[0].Pos.Col != 1 {
		t.Errorf("structs %v, want A at column 1", f.Structs)
	}
	if got := parseErr(t, "\xef\xbb\xbfstruct {"); !strings.HasPrefix(got, "m.thrift:1:8: ") {
		t.Errorf("error = %q, want it at 1:8", got)
	}
}

// TestLongDocCommentLinear checks that a doc comment of many /// lines is
// put together in time and memory linear in its length: each line was
// appended by copying all the lines before it, so 50,000 lines (3 MB) took
// half a minute. 5,000 lines of 65 bytes allocated 800 MB that way.
func TestLongDocCommentLinear(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&b, "/// this is a rather long documentation line, number %05d of many\n", i)
	}
	b.WriteString("struct A { 1: i32 x }\n")
	src := []byte(b.String())
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f, err := thrift.Parse("m.thrift", src, thrift.ParseOptions{})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if doc := f.Structs[0].Doc; strings.Count(doc, "\n") != 4999 || !strings.HasSuffix(doc, "number 04999 of many") {
		t.Errorf("doc comment has %d lines, want 5000, ending with line 4999", strings.Count(doc, "\n")+1)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 32*uint64(len(src)) {
		t.Errorf("parsing %d bytes allocated %d MiB, want under %d MiB", len(src), got>>20, 32*len(src)>>20)
	}
}

// TestLongExtendsChainLinear checks that a long chain of services each
// extending the one before is checked in time and memory linear in its
// length: each service's check walked the whole chain above it with a map
// of what it had seen, so 30,000 services took a minute to check.
func TestLongExtendsChainLinear(t *testing.T) {
	var b strings.Builder
	b.WriteString("service S0 { void f0() }\n")
	for i := 1; i < 3000; i++ {
		fmt.Fprintf(&b, "service S%d extends S%d { void f%d() }\n", i, i-1, i)
	}
	b.WriteString("service Loop1 extends Loop2 {}\nservice Loop2 extends Loop1 {}\n")
	src := []byte(b.String())
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := thrift.Parse("m.thrift", src, thrift.ParseOptions{})
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "service inheritance cycle: Loop2 -> Loop1 -> Loop2") || strings.Contains(err.Error(), "\n") {
		t.Errorf("err = %v, want just the cycle of Loop1 and Loop2", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 32*uint64(len(src)) {
		t.Errorf("parsing %d bytes allocated %d MiB, want under %d MiB", len(src), got>>20, 32*len(src)>>20)
	}
}

// TestExtendsChainRootLastLinear: a chain of 3,000 services whose root's
// own base is declared after them, so that while the chain was checked
// service by service its end was not known, costs memory linear in the
// file, as in TestLongExtendsChainLinear. Each service walked the whole
// chain below it: 473 MiB for 130 KB.
func TestExtendsChainRootLastLinear(t *testing.T) {
	var b strings.Builder
	b.WriteString("service S0 extends T { void f0() }\n")
	for i := 1; i < 3000; i++ {
		fmt.Fprintf(&b, "service S%d extends S%d { void f%d() }\n", i, i-1, i)
	}
	b.WriteString("service T extends R {}\nservice R {}\n")
	src := []byte(b.String())
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := thrift.Parse("m.thrift", src, thrift.ParseOptions{})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 32*uint64(len(src)) {
		t.Errorf("parsing %d bytes allocated %d MiB, want under %d MiB", len(src), got>>20, 32*len(src)>>20)
	}
}

// TestEnumAndFieldLookupsIndexed: constants naming each of 40,000 enum
// values, giving each as an integer, and setting each of 30,000 fields of
// a struct constant are checked through indexes: each was a scan of the
// enum or the struct, seconds for files of a megabyte. A guard, not a
// timing: linear, this parses in well under a second even under -race.
func TestEnumAndFieldLookupsIndexed(t *testing.T) {
	const n, nf = 40000, 30000
	var b strings.Builder
	b.WriteString("enum E {\n")
	for i := range n {
		fmt.Fprintf(&b, "  V%d = %d,\n", i, i)
	}
	b.WriteString("}\nconst list<E> NAMED = [")
	for i := range n {
		fmt.Fprintf(&b, "E.V%d,", i)
	}
	b.WriteString("]\nconst list<E> NUMBERED = [")
	for i := range n {
		fmt.Fprintf(&b, "%d,", i)
	}
	b.WriteString("]\nstruct S {\n")
	for i := range nf {
		fmt.Fprintf(&b, "  %d: i32 f%d\n", i+1, i)
	}
	b.WriteString("}\nconst S ALL = {")
	for i := range nf {
		fmt.Fprintf(&b, "\"f%d\": 1,", i)
	}
	b.WriteString("}\n")
	done := make(chan error, 1)
	go func() {
		_, err := thrift.Parse("m.thrift", []byte(b.String()), thrift.ParseOptions{})
		done <- err
	}()
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-timer.C:
		t.Fatal("checking a file of constants naming every enum value and struct field still running after 10 s")
	}
}

// TestIntConstantAsDouble: an integer constant may stand where a double
// goes, as an integer literal may (Apache's compiler takes both); other
// types still may not.
func TestIntConstantAsDouble(t *testing.T) {
	src := "const i32 A = 1\nconst i64 B = 2\nconst double D = A\nstruct S { 1: double d = B }\n"
	if _, err := thrift.Parse("m.thrift", []byte(src), thrift.ParseOptions{}); err != nil {
		t.Fatalf("an integer constant as a double: %v", err)
	}
	src = "const string A = \"x\"\nconst double D = A\n"
	if _, err := thrift.Parse("m.thrift", []byte(src), thrift.ParseOptions{}); err == nil || !strings.Contains(err.Error(), "cannot be used as double") {
		t.Fatalf("a string constant as a double: %v, want an error", err)
	}
}

// TestIncludeNameDropsAnyExtension: a file is included under its base name
// without its extension, whatever it is, as Apache's compiler names it:
// include "shared.idl" is "shared" (it was "shared.idl", so that
// shared.Base was unknown).
func TestIncludeNameDropsAnyExtension(t *testing.T) {
	srcs := map[string]string{
		"main.thrift": "include \"shared.idl\"\ninclude \"a.b.thrift\"\nstruct M { 1: shared.Base b, 2: a.b.C c }\n",
		"shared.idl":  "struct Base { 1: i32 x }\n",
		"a.b.thrift":  "struct C { 1: i32 x }\n",
	}
	read := func(p string) ([]byte, error) {
		if s, ok := srcs[p]; ok {
			return []byte(s), nil
		}
		return nil, fs.ErrNotExist
	}
	f, err := thrift.ParseFile("main.thrift", thrift.ParseOptions{ReadFile: read})
	if err != nil {
		t.Fatal(err)
	}
	if f.Name != "main" || f.IncludeMap["shared"] == nil {
		t.Errorf("main file named %q, includes %v; want main and shared", f.Name, f.IncludeMap)
	}
}

// TestSameIncludeTwice: one file included twice by the same file is one
// include, as Apache's compiler takes it; a different file under the same
// include name is still refused.
func TestSameIncludeTwice(t *testing.T) {
	srcs := map[string]string{
		"main.thrift":     "include \"common.thrift\"\ninclude \"common.thrift\"\nstruct M { 1: common.C c }\n",
		"common.thrift":   "struct C { 1: i32 x }\n",
		"clash.thrift":    "include \"common.thrift\"\ninclude \"d/common.thrift\"\n",
		"d/common.thrift": "struct D { 1: i32 x }\n",
	}
	read := func(p string) ([]byte, error) {
		if s, ok := srcs[filepath.ToSlash(p)]; ok {
			return []byte(s), nil
		}
		return nil, fs.ErrNotExist
	}
	if _, err := thrift.ParseFile("main.thrift", thrift.ParseOptions{ReadFile: read}); err != nil {
		t.Fatalf("a file included twice: %v", err)
	}
	if _, err := thrift.ParseFile("clash.thrift", thrift.ParseOptions{ReadFile: read}); err == nil || !strings.Contains(err.Error(), "already used by the include of") {
		t.Fatalf("two files under one include name: %v, want an error", err)
	}
}
