package thrift_test

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/idl/thrift"
)

// brokenCases maps each file in testdata/broken to the exact errors it must
// produce, in order.
var brokenCases = map[string][]string{
	"bad_escape.thrift": {
		"1:23: unknown escape sequence \\q in string literal",
	},
	"bad_uuid.thrift": {
		`1:16: value of const "U": "not-a-uuid" is not a UUID (expected 8-4-4-4-12 hexadecimal digits)`,
	},
	"const_cycle.thrift": {
		"1:1: constant cycle: X -> Y -> X",
	},
	"const_duplicate_keys.thrift": {
		`3:45: value of const "M": duplicate map key string "a", the same as string "a" at 3:29`,
		`3:53: value of const "M": duplicate map key "S", the same as string "a" at 3:29`,
		`4:37: value of const "N": duplicate map key int 1, the same as int 1 at 4:29`,
		`5:32: value of const "P": duplicate map key int 1, the same as "E.A" at 5:24`,
		`6:35: value of const "D": duplicate map key double 1, the same as int 1 at 6:29`,
		`7:36: value of const "Q": duplicate map key int 1, the same as bool true at 7:27`,
		`8:70: value of const "U": duplicate map key string "{00000000-0000-0000-0000-0000000000ab}", the same as string "00000000-0000-0000-0000-0000000000AB" at 8:27`,
	},
	"default_double_for_i32.thrift": {
		`2:14: default value of field "a": expected i32, found double 1.5`,
	},
	"default_list_for_map.thrift": {
		`2:27: default value of field "m": expected map<string,i32>, found list [1, 2]`,
	},
	"default_out_of_range.thrift": {
		`2:17: default value of field "small": 128 does not fit in i8 (-128 to 127)`,
	},
	"default_string_for_i32.thrift": {
		`2:18: default value of field "count": expected i32, found string "ten"`,
	},
	"default_unknown_enum_value.thrift": {
		`4:16: default value of field "c": enum Color has no value "PURPLE"`,
	},
	"duplicate_definition.thrift": {
		`3:1: "Thing" is already defined at testdata/broken/duplicate_definition.thrift:1:1`,
	},
	"duplicate_field_id.thrift": {
		`4:3: duplicate field id 1 in struct S: already used by field "a" (line 2)`,
	},
	"duplicate_field_name.thrift": {
		`3:3: duplicate field name "a" in struct S (first at line 2)`,
	},
	"enum_duplicates.thrift": {
		"3:3: enum value B = 1 repeats the value of A (line 2) in enum E",
		`4:3: duplicate value name "A" in enum E (first at line 2)`,
	},
	"extends_non_service.thrift": {
		`3:19: service S extends "Base", which is a struct, not a service`,
	},
	"field_id_zero.thrift": {
		"2:3: field id 0 is out of range: ids are 1 to 32767",
	},
	"field_named_like_getter.thrift": {
		`3:3: field "get_foo" of struct S maps to Go name GetFoo, which is the Get method generated for field "foo"`,
	},
	"go_name_clash_definitions.thrift": {
		`2:1: "UserInfo" and "user_info" (testdata/broken/go_name_clash_definitions.thrift:1:1) both map to Go name UserInfo`,
	},
	"go_name_clash_fields.thrift": {
		`3:3: fields "FooBar" and "foo_bar" (line 2) of struct S both map to Go name FooBar`,
	},
	"include_not_found.thrift": {
		`2:1: include file "no/such/file.thrift" not found (looked in testdata/broken/no/such/file.thrift)`,
	},
	"missing_brace.thrift": {
		`4:1: expected '}' to close struct S, found "service"`,
	},
	"missing_paren.thrift": {
		`3:1: expected ')' to close the arguments of f, found "}"`,
	},
	"wrong_bracket.thrift": {
		`3:1: expected '}' to close struct T, found ")"`,
	},
	"multiple_errors.thrift": {
		`3:6: unknown type "Unknown": no definition "Unknown" in testdata/broken/multiple_errors.thrift`,
		`4:3: duplicate field id 1 in struct A: already used by field "x" (line 3)`,
		`7:1: "A" is already defined at testdata/broken/multiple_errors.thrift:2:1`,
		`10:3: oneway function "f" must return void, not string`,
	},
	"oneway_result.thrift": {
		`2:3: oneway function "fire" must return void, not i32`,
	},
	"oneway_throws.thrift": {
		`4:30: oneway function "fire" cannot declare throws`,
	},
	"senum.thrift": {
		"1:1: senum is deprecated and not supported; use typedef string or an enum",
	},
	"struct_const_unknown_field.thrift": {
		`5:22: value of const "V": struct S has no field "b"`,
	},
	"struct_const_duplicate_field.thrift": {
		`2:30: value of const "C": field "x" of struct P is given twice (first at 2:14)`,
	},
	"throws_not_exception.thrift": {
		`4:23: throws field "e" of S.f has type NotAnException, which is not an exception`,
	},
	"too_deep.thrift": {
		"2:326: type nested more than 64 levels deep",
	},
	"typedef_cycle.thrift": {
		"1:1: typedef cycle: A -> B -> A",
	},
	"union_required.thrift": {
		`2:3: union field "a" cannot be required`,
	},
	"unknown_include.thrift": {
		`2:6: unknown type "other.Thing": no include named "other"`,
	},
	"unknown_qualified_type.thrift": {
		`4:6: unknown type "enums.Nope": testdata/enums.thrift has no definition "Nope"`,
	},
	"unknown_type.thrift": {
		`3:6: unknown type "Missing": no definition "Missing" in testdata/broken/unknown_type.thrift`,
	},
}

func TestBroken(t *testing.T) {
	files, err := filepath.Glob("testdata/broken/*.thrift")
	if err != nil {
		t.Fatal(err)
	}
	covered := 0
	for _, path := range files {
		name := filepath.Base(path)
		if name == "include_cycle_a.thrift" || name == "include_cycle_b.thrift" {
			continue // TestIncludeCycle
		}
		want, ok := brokenCases[name]
		if !ok {
			t.Errorf("%s has no expected errors in brokenCases", path)
			continue
		}
		covered++
		t.Run(name, func(t *testing.T) {
			f, err := thrift.ParseFile(path, thrift.ParseOptions{})
			if err == nil {
				t.Fatalf("ParseFile succeeded (%v), want errors", f.Path)
			}
			if f != nil {
				t.Errorf("ParseFile returned a file along with errors")
			}
			var list thrift.ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("error is %T, want thrift.ErrorList", err)
			}
			var got []string
			for _, e := range list {
				got = append(got, e.Error())
			}
			if len(got) != len(want) {
				t.Fatalf("got %d errors:\n%v\nwant %d:\n%v", len(got), err, len(want), want)
			}
			for i := range want {
				w := path + ":" + want[i]
				if got[i] != w {
					t.Errorf("error %d:\n got: %s\nwant: %s", i, got[i], w)
				}
			}
		})
	}
	if covered != len(brokenCases) {
		t.Errorf("brokenCases lists %d files, found %d in testdata/broken", len(brokenCases), covered)
	}
	if covered < 10 {
		t.Errorf("only %d broken fixtures", covered)
	}
}

func TestIncludeCycle(t *testing.T) {
	_, err := thrift.ParseFile("testdata/broken/include_cycle_a.thrift", thrift.ParseOptions{})
	want := "testdata/broken/include_cycle_b.thrift:2:1: include cycle: testdata/broken/include_cycle_a.thrift" +
		" -> testdata/broken/include_cycle_b.thrift -> testdata/broken/include_cycle_a.thrift"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}

// A chain of files each including the next, the last including the first,
// is one cycle, reported once with its whole chain; a file reached twice by
// paths that do not loop (d.thrift below) is no cycle. The loader keeps the
// files being loaded in a map, so a long chain is checked in time linear in
// its length.
func TestIncludeCycleLongChain(t *testing.T) {
	const n = 2000
	name := func(i int) string { return "f" + strconv.Itoa(i) + ".thrift" }
	files := map[string]string{
		"top.thrift": "include \"b.thrift\"\ninclude \"c.thrift\"\ninclude \"f0.thrift\"\n",
		"b.thrift":   "include \"d.thrift\"\n",
		"c.thrift":   "include \"d.thrift\"\n",
		"d.thrift":   "struct D {}\n",
	}
	for i := range n {
		files[name(i)] = "include \"" + name((i+1)%n) + "\"\n"
	}
	read := func(path string) ([]byte, error) {
		if src, ok := files[path]; ok {
			return []byte(src), nil
		}
		return nil, fs.ErrNotExist
	}
	_, err := thrift.Parse("top.thrift", []byte(files["top.thrift"]), thrift.ParseOptions{ReadFile: read})
	var list thrift.ErrorList
	if !errors.As(err, &list) || len(list) != 1 {
		t.Fatalf("got %v, want one include cycle", err)
	}
	chain := make([]string, 0, n+1)
	for i := range n + 1 {
		chain = append(chain, name(i%n))
	}
	want := name(n-1) + ":1:1: include cycle: " + strings.Join(chain, " -> ")
	if got := list[0].Error(); got != want {
		t.Fatalf("got %.200s...\nwant %.200s...", got, want)
	}
}

func TestIncludeNotFoundIsNotExist(t *testing.T) {
	_, err := thrift.ParseFile("testdata/broken/include_not_found.thrift", thrift.ParseOptions{})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("errors.Is(err, fs.ErrNotExist) = false for %v", err)
	}
	_, err = thrift.ParseFile("testdata/no_such_main.thrift", thrift.ParseOptions{})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing main file: errors.Is(err, fs.ErrNotExist) = false for %v", err)
	}
}
