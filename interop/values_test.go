package interop_test

import (
	"math"
	"math/rand/v2"

	pe "github.com/petrel-rpc/petrel/interop/gen-petrel/everything"
)

func ptr[T any](v T) *T { return &v }

// fullValue sets every field of Everything, optional ones included, with
// values at the edges of their types. Its maps have one entry each, so that
// both writers produce the same bytes (Go map order is random).
func fullValue() *pe.Everything {
	return &pe.Everything{
		Flag:         true,
		Octet:        -128,
		Tiny:         127,
		ShortInt:     math.MinInt16,
		Int32Value:   math.MaxInt32,
		Int64Value:   math.MinInt64,
		Ratio:        -1.5e300,
		Text:         "héllo, wörld ✓",
		Blob:         []byte{0, 1, 2, 0xfe, 0xff},
		Color:        pe.Color_NEGATIVE,
		Stamp:        1_700_000_000_123,
		Inner:        &pe.Inner{ID: 7, Name: "seven", Weight: ptr(int64(-77))},
		Choice:       &pe.Choice{Inner: &pe.Inner{ID: 1, Name: "chosen"}},
		Oops:         &pe.Oops{Code: 500, Message: "boom", Detail: &pe.Inner{ID: 2}},
		Bools:        []bool{true, false, true},
		Octets:       []int8{-1, 0, 1, 127},
		Shorts:       []int16{math.MinInt16, -1, 0, math.MaxInt16},
		Ints:         []int32{math.MinInt32, -64, 63, 64, math.MaxInt32},
		Longs:        []int64{math.MinInt64, -1, 0, 1 << 40, math.MaxInt64},
		Doubles:      []float64{0, -0.25, math.Inf(1), math.SmallestNonzeroFloat64, math.NaN(), math.Copysign(0, -1)},
		IntSet:       []int32{3, 1, 2},
		LongToDouble: map[int64]float64{-9: 9.5},
		Strings:      []string{"", "a", "日本語"},
		StringSet:    []string{"x", "y"},
		StringMap:    map[string]string{"key": "value"},
		Blobs:        [][]byte{{}, {0}, []byte("bytes")},
		Names:        pe.Names{"ann", "bob"},
		Inners:       []*pe.Inner{{ID: 1, Name: "one"}, {ID: 2, Name: "two", Weight: ptr(int64(2))}},
		InnerByName:  map[string]*pe.Inner{"three": {ID: 3, Name: "three"}},
		ColorSet:     []pe.Color{pe.Color_RED, pe.Color_BLUE},
		Colors:       []pe.Color{pe.Color_GREEN, pe.Color_GREEN, pe.Color_NEGATIVE},
		ColorCount:   map[pe.Color]int32{pe.Color_BLUE: 4},
		Nested:       map[string][][]int32{"n": {{1, 2}, {}, {-3}}},
		ListOfMaps:   []map[int32]string{{1: "one"}, {}, {-2: "minus two"}},
		Matrix:       [][]int64{{1, 2, 3}, {}, {math.MaxInt64}},
		OptFlag:      ptr(false),
		OptInt:       ptr(int32(-5)),
		OptText:      ptr(""),
		OptBlob:      []byte{},
		OptInner:     &pe.Inner{ID: 44},
		OptInts:      []int32{},
		OptMap:       map[string]int64{"opt": math.MinInt64},
		OptColor:     ptr(pe.Color_RED),
		OptRatio:     ptr(math.Pi),
		DefInt:       -42,
		DefText:      "not the default",
		DefRatio:     0,
		DefColor:     pe.Color_BLUE,
		DefList:      []int32{9},
		DefMap:       map[string]int32{"two": 2},
		DefFlag:      false,
		OptDef:       ptr(int64(8)),
		ReqInt:       60,
		ReqText:      "required",
	}
}

// sparseValue leaves every optional field unset and every other field at
// its zero value or the IDL's default (struct fields must be set: Apache's
// generated code cannot write a nil struct field that is not optional).
func sparseValue() *pe.Everything {
	v := pe.NewEverything()
	v.Inner = &pe.Inner{}
	v.Choice = &pe.Choice{Number: ptr(int32(0))}
	v.Oops = &pe.Oops{}
	return v
}

// randomValue fills Everything from r: random lengths, random map sizes
// (so the two writers' bytes differ in order but not in length), optional
// fields set or not at random.
func randomValue(r *rand.Rand) *pe.Everything {
	g := gen{r}
	v := &pe.Everything{
		Flag:         g.bool(),
		Octet:        int8(g.i64()),
		Tiny:         int8(g.i64()),
		ShortInt:     int16(g.i64()),
		Int32Value:   int32(g.i64()),
		Int64Value:   g.i64(),
		Ratio:        g.f64(),
		Text:         g.str(),
		Blob:         g.bytes(),
		Color:        g.color(),
		Stamp:        pe.Timestamp(g.i64()),
		Inner:        g.inner(),
		Choice:       g.choice(),
		Oops:         &pe.Oops{Code: int32(g.i64()), Message: g.str()},
		Bools:        list(g, g.bool),
		Octets:       list(g, func() int8 { return int8(g.i64()) }),
		Shorts:       list(g, func() int16 { return int16(g.i64()) }),
		Ints:         list(g, func() int32 { return int32(g.i64()) }),
		Longs:        list(g, g.i64),
		Doubles:      list(g, g.f64),
		IntSet:       set(list(g, func() int32 { return int32(g.i64()) })),
		LongToDouble: mapOf(g, g.i64, g.f64),
		Strings:      list(g, g.str),
		StringSet:    set(list(g, g.str)),
		StringMap:    mapOf(g, g.str, g.str),
		Blobs:        list(g, g.bytes),
		Names:        list(g, g.str),
		Inners:       list(g, g.inner),
		InnerByName:  mapOf(g, g.str, g.inner),
		ColorSet:     set(list(g, g.color)),
		Colors:       list(g, g.color),
		ColorCount:   mapOf(g, g.color, func() int32 { return int32(g.i64()) }),
		Nested: mapOf(g, g.str, func() [][]int32 {
			return list(g, func() []int32 { return set(list(g, func() int32 { return int32(g.i64()) })) })
		}),
		ListOfMaps: list(g, func() map[int32]string { return mapOf(g, func() int32 { return int32(g.i64()) }, g.str) }),
		Matrix:     list(g, func() []int64 { return list(g, g.i64) }),
		DefInt:     int32(g.i64()),
		DefText:    g.str(),
		DefRatio:   g.f64(),
		DefColor:   g.color(),
		DefList:    list(g, func() int32 { return int32(g.i64()) }),
		DefMap:     mapOf(g, g.str, func() int32 { return int32(g.i64()) }),
		DefFlag:    g.bool(),
		ReqInt:     int32(g.i64()),
		ReqText:    g.str(),
	}
	if g.bool() {
		v.Oops.Detail = g.inner()
	}
	if g.bool() {
		v.OptFlag = ptr(g.bool())
	}
	if g.bool() {
		v.OptInt = ptr(int32(g.i64()))
	}
	if g.bool() {
		v.OptText = ptr(g.str())
	}
	if g.bool() {
		v.OptBlob = g.bytes() // never nil: set means set
	}
	if g.bool() {
		v.OptInner = g.inner()
	}
	if g.bool() {
		v.OptInts = append([]int32{}, list(g, func() int32 { return int32(g.i64()) })...)
	}
	if g.bool() {
		v.OptMap = mapOf(g, g.str, g.i64)
		if v.OptMap == nil {
			v.OptMap = map[string]int64{}
		}
	}
	if g.bool() {
		v.OptColor = ptr(g.color())
	}
	if g.bool() {
		v.OptRatio = ptr(g.f64())
	}
	if g.bool() {
		// Apache does not write an optional field equal to its default.
		if d := g.i64(); d != pe.Everything_OptDef_DEFAULT {
			v.OptDef = ptr(d)
		}
	}
	return v
}

type gen struct{ r *rand.Rand }

func (g gen) bool() bool { return g.r.IntN(2) == 1 }

// i64 favours the values where encodings change: small numbers, varint
// length boundaries and the extremes.
func (g gen) i64() int64 {
	switch g.r.IntN(4) {
	case 0:
		return int64(g.r.IntN(256)) - 128
	case 1:
		edges := []int64{0, 63, 64, -65, 8191, 8192, math.MaxInt32, math.MinInt32, math.MaxInt64, math.MinInt64}
		return edges[g.r.IntN(len(edges))]
	default:
		return int64(g.r.Uint64())
	}
}

// f64 returns a finite double (NaN is not equal to itself).
func (g gen) f64() float64 {
	for {
		f := math.Float64frombits(g.r.Uint64())
		if !math.IsNaN(f) {
			return f
		}
	}
}

func (g gen) str() string {
	alphabet := []string{"a", "z", " ", "é", "✓", "日", "\x00", "\n"}
	n := g.r.IntN(12)
	s := ""
	for range n {
		s += alphabet[g.r.IntN(len(alphabet))]
	}
	return s
}

func (g gen) bytes() []byte {
	b := make([]byte, g.r.IntN(10))
	for i := range b {
		b[i] = byte(g.r.Uint32())
	}
	return b
}

func (g gen) color() pe.Color {
	colors := []pe.Color{pe.Color_RED, pe.Color_GREEN, pe.Color_BLUE, pe.Color_NEGATIVE}
	return colors[g.r.IntN(len(colors))]
}

func (g gen) inner() *pe.Inner {
	in := &pe.Inner{ID: int32(g.i64()), Name: g.str()}
	if g.bool() {
		in.Weight = ptr(g.i64())
	}
	return in
}

// choice sets exactly one member of the union.
func (g gen) choice() *pe.Choice {
	switch g.r.IntN(5) {
	case 0:
		return &pe.Choice{Number: ptr(int32(g.i64()))}
	case 1:
		return &pe.Choice{Text: ptr(g.str())}
	case 2:
		return &pe.Choice{Inner: g.inner()}
	case 3:
		return &pe.Choice{Words: append([]string{}, list(g, g.str)...)}
	default:
		return &pe.Choice{Raw: g.bytes()}
	}
}

// list returns nil, empty or up to 8 elements.
func list[T any](g gen, f func() T) []T {
	n := g.r.IntN(10) - 1
	if n < 0 {
		return nil
	}
	s := make([]T, n)
	for i := range s {
		s[i] = f()
	}
	return s
}

// set drops repeated elements (Apache refuses to write a set that has any).
func set[T comparable](s []T) []T {
	if s == nil {
		return nil
	}
	seen := make(map[T]bool, len(s))
	out := s[:0]
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

func mapOf[K comparable, V any](g gen, k func() K, v func() V) map[K]V {
	n := g.r.IntN(7) - 1
	if n < 0 {
		return nil
	}
	m := make(map[K]V, n)
	for range n {
		m[k()] = v()
	}
	return m
}
