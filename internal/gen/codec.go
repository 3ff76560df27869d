package gen

import (
	"strconv"
	"strings"

	"github.com/petrel-rpc/petrel/idl/thrift"
)

// proto is the protocol a codec method is generated for.
type proto struct{ compact bool }

var (
	binaryProto  = proto{}
	compactProto = proto{compact: true}
)

// v returns the codec value of the protocol.
func (pr proto) v() string {
	if pr.compact {
		return "thrift.Compact"
	}
	return "thrift.Binary"
}

// toPrim converts x (of t's Go type) to the Go type of its codec primitive.
func (fg *fileGen) toPrim(t *thrift.Type, key bool, x string) string {
	_, base := prim(kindOf(t, key))
	if fg.goType(t, key) == base {
		return x
	}
	return base + "(" + x + ")"
}

// fromPrim converts v (of the primitive's Go type) to t's Go type.
func (fg *fileGen) fromPrim(t *thrift.Type, key bool, v string) string {
	_, base := prim(kindOf(t, key))
	gt := fg.goType(t, key)
	if gt == base {
		return v
	}
	return gt + "(" + v + ")"
}

// bulkPrim returns the primitive name ("I64", "I32", "Double") when a list of
// elem can be written and read with the codec's bulk slice functions, and
// the slice type.
func (fg *fileGen) bulkPrim(pr proto, elem *thrift.Type) (string, string) {
	gt := fg.goType(elem, false)
	var name string
	switch gt {
	case "int64":
		name = "I64"
	case "int32":
		name = "I32"
	case "float64":
		name = "Double"
	default:
		return "", ""
	}
	if pr.compact && !compactBulk[name] {
		return "", ""
	}
	return name, "[]" + gt
}

// compactBulk lists the element types the compact codec has bulk slice
// functions for.
var compactBulk = map[string]bool{"I64": true, "I32": true, "Double": true}

// asSlice converts container expression x of type t to plain slice type st
// when t is a defined (typedef) type.
func (fg *fileGen) asSlice(t *thrift.Type, x, st string) string {
	if fg.goType(t, false) == st {
		return x
	}
	return st + "(" + x + ")"
}

// ---- sizes ----

// lenValue emits the statements that add the variable part of the encoded
// size of x (of type t) to l, and returns the constant part.
func (fg *fileGen) lenValue(pr proto, t *thrift.Type, key bool, x string) int {
	k := kindOf(t, key)
	if key && isContainerKind(k) {
		return fg.lenValue(pr, t, false, "thrift.KeyValue("+x+")")
	}
	if pr.compact {
		if c := compactFixed(k); c > 0 {
			return c
		}
	} else if c := binaryFixed(k); c > 0 {
		return c
	}
	switch k {
	case wI16, wI32, wI64:
		name, _ := prim(k)
		fg.p("l += thrift.Compact.%sLength(%s)", name, fg.toPrim(t, key, x))
		return 0
	case wString, wBinary:
		if pr.compact {
			name, _ := prim(k)
			fg.p("l += thrift.Compact.%sLength(%s)", name, fg.toPrim(t, key, x))
			return 0
		}
		fg.p("l += len(%s)", x)
		return 4
	case wStruct:
		if pr.compact {
			fg.p("l += %s.BLengthCompact()", x)
		} else {
			fg.p("l += %s.BLength()", x)
		}
		return 0
	case wList, wSet:
		r := t.Resolved()
		ek := kindOf(r.Elem, false)
		c := 5
		if pr.compact {
			c = 0
			fg.p("l += thrift.Compact.ListBeginLength(len(%s))", x)
		}
		if f := fixedOf(pr, ek); f > 0 {
			fg.p("l += len(%s) * %d", x, f)
			return c
		}
		if name, st := fg.bulkPrim(pr, r.Elem); pr.compact && name != "" {
			fg.p("l += thrift.Compact.%sSliceLength(%s)", name, fg.asSlice(t, x, st))
			return c
		}
		v := fg.local("v")
		var ec int
		inner := fg.capture(func() { ec = fg.lenValue(pr, r.Elem, false, v) })
		if ec > 0 {
			fg.p("l += len(%s) * %d", x, ec)
		}
		fg.p("for _, %s := range %s {", v, x)
		fg.write(inner)
		fg.p("}")
		return c
	case wMap:
		r := t.Resolved()
		kk, vk := kindOf(r.Key, true), kindOf(r.Elem, false)
		c := 6
		if pr.compact {
			c = 0
			fg.p("l += thrift.Compact.MapBeginLength(len(%s))", x)
		}
		fk, fv := fixedOf(pr, kk), fixedOf(pr, vk)
		if fk > 0 && fv > 0 {
			fg.p("l += len(%s) * %d", x, fk+fv)
			return c
		}
		kv, vv := fg.local("k"), fg.local("v")
		var kc, vc int
		kin := fg.capture(func() { kc = fg.lenValue(pr, r.Key, true, kv) })
		vin := fg.capture(func() { vc = fg.lenValue(pr, r.Elem, false, vv) })
		if kc+vc > 0 {
			fg.p("l += len(%s) * %d", x, kc+vc)
		}
		if kin == "" {
			kv = "_"
		}
		if vin == "" {
			vv = "_"
		}
		if kv == "_" && vv == "_" {
			return c
		}
		if vv == "_" {
			fg.p("for %s := range %s {", kv, x)
		} else {
			fg.p("for %s, %s := range %s {", kv, vv, x)
		}
		fg.write(kin)
		fg.write(vin)
		fg.p("}")
		return c
	}
	fg.g.fail(t.Pos, "cannot size type %s", t)
	return 0
}

func fixedOf(pr proto, k wireKind) int {
	if pr.compact {
		return compactFixed(k)
	}
	return binaryFixed(k)
}

// ---- writing ----

// writeValue emits the statements that write x (of type t) at b[off:].
func (fg *fileGen) writeValue(pr proto, t *thrift.Type, key bool, x string) {
	k := kindOf(t, key)
	if key && isContainerKind(k) {
		fg.writeValue(pr, t, false, "thrift.KeyValue("+x+")")
		return
	}
	V := pr.v()
	switch k {
	case wBool, wI8, wI16, wI32, wI64, wDouble, wUUID:
		name, _ := prim(k)
		fg.p("off += %s.Write%s(b[off:], %s)", V, name, fg.toPrim(t, key, x))
	case wString, wBinary:
		name, _ := prim(k)
		if fg.nocopy {
			fg.p("off += %s.Write%sNocopy(b[off:], w, %s)", V, name, fg.toPrim(t, key, x))
		} else {
			fg.p("off += %s.Write%s(b[off:], %s)", V, name, fg.toPrim(t, key, x))
		}
	case wStruct:
		switch {
		case pr.compact:
			fg.p("off += %s.FastWriteCompact(b[off:])", x)
		case fg.nocopy:
			fg.p("off += %s.FastWriteNocopy(b[off:], w)", x)
		default:
			fg.p("off += %s.FastWrite(b[off:])", x)
		}
	case wList, wSet:
		r := t.Resolved()
		begin := "List"
		if k == wSet {
			begin = "Set"
		}
		fg.p("off += %s.Write%sBegin(b[off:], %s, len(%s))", V, begin, ttype(kindOf(r.Elem, false)), x)
		if name, st := fg.bulkPrim(pr, r.Elem); name != "" {
			fg.p("off += %s.Write%sSlice(b[off:], %s)", V, name, fg.asSlice(t, x, st))
			return
		}
		v := fg.local("v")
		fg.p("for _, %s := range %s {", v, x)
		fg.writeValue(pr, r.Elem, false, v)
		fg.p("}")
	case wMap:
		r := t.Resolved()
		fg.p("off += %s.WriteMapBegin(b[off:], %s, %s, len(%s))", V, ttype(kindOf(r.Key, true)), ttype(kindOf(r.Elem, false)), x)
		kv, vv := fg.local("k"), fg.local("v")
		fg.p("for %s, %s := range %s {", kv, vv, x)
		fg.writeValue(pr, r.Key, true, kv)
		fg.writeValue(pr, r.Elem, false, vv)
		fg.p("}")
	default:
		fg.g.fail(t.Pos, "cannot write type %s", t)
	}
}

// binRun batches the fixed-size parts of binary writes (field headers,
// fixed-size values, container headers) that follow each other: their total
// size is known at generation time, so a run is written through one array
// pointer taken with a single bounds check, at constant offsets whose
// bounds the compiler proves. Anything of variable size (strings, binaries,
// structs, container elements) ends the run and is written at b[off:].
type binRun struct {
	fg    *fileGen
	size  int
	parts []binPart
}

// binPart is one fixed-size write of a run.
type binPart struct {
	at    int                     // offset in the run
	write func(dst string) string // the call that writes at dst
}

// add appends a write of size bytes to the run.
func (r *binRun) add(size int, write func(dst string) string) {
	r.parts = append(r.parts, binPart{at: r.size, write: write})
	r.size += size
}

// flush emits the run's writes and advances off past them.
func (r *binRun) flush() {
	switch len(r.parts) {
	case 0:
		return
	case 1:
		r.fg.p("off += %s", r.parts[0].write("b[off:]"))
	default:
		w := r.fg.local("w")
		r.fg.p("%s := (*[%d]byte)(b[off:])", w, r.size)
		for _, pt := range r.parts {
			r.fg.p("%s", pt.write(w+"["+itoa(pt.at)+":]"))
		}
		r.fg.p("off += %d", r.size)
	}
	r.size, r.parts = 0, r.parts[:0]
}

// binCall returns a write that calls the binary codec's method name with
// the destination and args.
func binCall(name string, args ...string) func(string) string {
	return func(dst string) string {
		return "thrift.Binary." + name + "(" + strings.Join(append([]string{dst}, args...), ", ") + ")"
	}
}

// writeBinary emits the binary write of x (of type t), adding its
// fixed-size parts to run r.
func (fg *fileGen) writeBinary(r *binRun, t *thrift.Type, key bool, x string) {
	k := kindOf(t, key)
	if key && isContainerKind(k) {
		fg.writeBinary(r, t, false, "thrift.KeyValue("+x+")")
		return
	}
	switch k {
	case wBool, wI8, wI16, wI32, wI64, wDouble, wUUID:
		name, _ := prim(k)
		r.add(binaryFixed(k), binCall("Write"+name, fg.toPrim(t, key, x)))
	case wString, wBinary:
		r.flush()
		name, _ := prim(k)
		if fg.nocopy {
			fg.p("off += thrift.Binary.Write%sNocopy(b[off:], w, %s)", name, fg.toPrim(t, key, x))
		} else {
			fg.p("off += thrift.Binary.Write%s(b[off:], %s)", name, fg.toPrim(t, key, x))
		}
	case wStruct:
		r.flush()
		if fg.nocopy {
			fg.p("off += %s.FastWriteNocopy(b[off:], w)", x)
		} else {
			fg.p("off += %s.FastWrite(b[off:])", x)
		}
	case wList, wSet:
		rt := t.Resolved()
		begin := "WriteListBegin"
		if k == wSet {
			begin = "WriteSetBegin"
		}
		r.add(5, binCall(begin, ttype(kindOf(rt.Elem, false)), "len("+x+")"))
		r.flush()
		if name, st := fg.bulkPrim(binaryProto, rt.Elem); name != "" {
			fg.p("off += thrift.Binary.Write%sSlice(b[off:], %s)", name, fg.asSlice(t, x, st))
			return
		}
		v := fg.local("v")
		fg.p("for _, %s := range %s {", v, x)
		fg.writeBinary(r, rt.Elem, false, v)
		r.flush()
		fg.p("}")
	case wMap:
		rt := t.Resolved()
		r.add(6, binCall("WriteMapBegin", ttype(kindOf(rt.Key, true)), ttype(kindOf(rt.Elem, false)), "len("+x+")"))
		r.flush()
		kv, vv := fg.local("k"), fg.local("v")
		fg.p("for %s, %s := range %s {", kv, vv, x)
		fg.writeBinary(r, rt.Key, true, kv)
		fg.writeBinary(r, rt.Elem, false, vv)
		r.flush()
		fg.p("}")
	default:
		fg.g.fail(t.Pos, "cannot write type %s", t)
	}
}

// ---- reading ----

// errReturn returns the statement that returns a read error: wrapped with
// the field being read (fg.field, "Struct.field"), so that an error deep in
// nested structs reads as a path.
func (fg *fileGen) errReturn() string {
	if fg.field == "" {
		return "return off, err"
	}
	return "return off, fmt.Errorf(" + strconv.Quote(fg.field+": %w") + ", err)"
}

// structArray emits, for a container whose elements are structs, one
// allocation of structs that the elements then point into, and returns its
// name ("" for other element types). One allocation instead of one per
// element; the price is that an element keeps its array alive.
//
// The header's size is only checked against one input byte per element (a
// struct may be just its stop byte), so the array first holds at most about
// 64 KiB of structs; structChunk tops it up as elements are read.
func (fg *fileGen) structArray(elem *thrift.Type) string {
	if kindOf(elem, false) != wStruct {
		return ""
	}
	a := fg.local("a")
	fg.p("%s := make([]%s, min(size, %d))", a, strings.TrimPrefix(fg.goType(elem, false), "*"), structChunkLen(structOf(elem), fg.g.opt.KeepUnknown))
	return a
}

// structChunk emits, at the start of element i's read, the top-up of array
// a (from structArray) once it is used up: as many structs again as were
// read (at most the rest), so what is allocated stays within twice what the
// input has shown; and points the next struct read at a[0].
func (fg *fileGen) structChunk(elem *thrift.Type, a, i string) {
	fg.p("if len(%s) == 0 {", a)
	fg.p("%s = make([]%s, min(size-%s, %s))", a, strings.TrimPrefix(fg.goType(elem, false), "*"), i, i)
	fg.p("}")
	fg.slot = a + "[0]"
}

// structArrayBytes is about how much memory structArray allocates before
// any element is read.
const structArrayBytes = 64 << 10

// structChunkLen returns how many structs s make about structArrayBytes (at
// least one), from an estimate of the Go size of s on a 64-bit platform.
func structChunkLen(s *thrift.Struct, keepUnknown bool) int {
	size, align := 0, 1
	add := func(n, al int) {
		size = (size + al - 1) / al * al
		size += n
		align = max(align, al)
	}
	for _, fl := range s.Fields {
		if fieldPointer(s, fl) {
			add(8, 8)
			continue
		}
		add(goSize(kindOf(fl.Type, false)))
	}
	if keepUnknown {
		add(48, 8)
	}
	size = (size + align - 1) / align * align
	return max(1, structArrayBytes/max(size, 1))
}

// goSize returns the size and alignment of a Go value of wire kind k (a
// struct field or a container element, not a map key) on a 64-bit platform.
func goSize(k wireKind) (int, int) {
	switch k {
	case wBool, wI8:
		return 1, 1
	case wI16:
		return 2, 2
	case wI32:
		return 4, 4
	case wUUID:
		return 16, 1
	case wString:
		return 16, 8
	case wBinary, wList, wSet:
		return 24, 8
	}
	return 8, 8 // i64, double, map, struct pointer
}

// elemSize returns the Go size of a container element or map key of type t.
func elemSize(t *thrift.Type, key bool) int {
	k := kindOf(t, key)
	if key && isContainerKind(k) {
		return 8 // a pointer to the container
	}
	n, _ := goSize(k)
	return n
}

// mapBytes is about how much memory a reader allocates for a map before
// reading its entries. A map's header is checked only against the least
// input its entries take (two bytes an entry in compact), and entries with
// one key repeated make a map of one: a reader that made the map for the
// size announced allocated 40 times its input (map<string,string>) for a
// map that ends with one entry. Past this budget the map grows as its
// entries are read; 64 KiB is 2048 string-to-string entries, so typical
// maps still take one allocation. A list or set is made whole: its
// elements stay, so the slice costs what a valid list of that many least
// elements in the same input would.
const mapBytes = 64 << 10

// mapHint returns the expression of the size hint of a map with keys and
// values of Go sizes ks and vs and of fixed wire sizes fk and fv (0: not
// fixed): the header's size itself when the entry's fixed wire size is at
// least its Go size (the header's check then bounds the map by the input),
// else at most mapBytes of entries.
func mapHint(ks, vs, fk, fv int) string {
	if fk > 0 && fv > 0 && fk+fv >= ks+vs {
		return "size"
	}
	return "min(size, " + itoa(max(1, mapBytes/(ks+vs))) + ")"
}

// readValue emits a block that reads a value of type t at b[off:] and
// passes the Go expression holding it to set, which emits the assignment.
// where names the value in error messages.
//
// target, when not "", is an assignable expression of t's Go type that set
// would assign to; scalars are then read straight into it. The variables n
// and err must be in scope (the generated readers declare them).
func (fg *fileGen) readValue(pr proto, t *thrift.Type, key bool, where, target string, set func(string)) {
	k := kindOf(t, key)
	if key && isContainerKind(k) {
		fg.readValue(pr, t, false, where, "", func(e string) { set("&" + e) })
		return
	}
	V := pr.v()
	switch k {
	case wBool, wI8, wI16, wI32, wI64, wDouble, wUUID, wString, wBinary:
		name, _ := prim(k)
		if k == wString || k == wBinary {
			// Aliases the input: FastRead hands its readers a private copy.
			name += "Nocopy"
		}
		if target != "" && fg.fromPrim(t, key, "v") == "v" {
			fg.p("%s, n, err = %s.Read%s(b[off:])", target, V, name)
			fg.p("if err != nil { %s }", fg.errReturn())
			fg.p("off += n")
			return
		}
		v := fg.local("v")
		fg.p("%s, n, err := %s.Read%s(b[off:])", v, V, name)
		fg.p("if err != nil { %s }", fg.errReturn())
		fg.p("off += n")
		set(fg.fromPrim(t, key, v))
	case wStruct:
		v := fg.local("v")
		if slot := fg.slot; slot != "" {
			// An element of a container: its structs were allocated at once.
			reset := fg.slotReset
			fg.slot, fg.slotReset = "", false
			fg.p("%s := &%s", v, slot)
			if reset || fg.hasDefaults(structOf(t)) {
				fg.p("%s.InitDefault()", v)
			}
		} else {
			fg.p("%s := %s()", v, fg.newFunc(structOf(t)))
		}
		if pr.compact {
			fg.p("n, err = %s.FastReadDepthCompact(b[off:], depth+1)", v)
		} else {
			fg.p("n, err = %s.FastReadDepth(b[off:], depth+1)", v)
		}
		fg.p("if err != nil { %s }", fg.errReturn())
		fg.p("off += n")
		set(v)
	case wList, wSet:
		r := t.Resolved()
		begin := "List"
		if k == wSet {
			begin = "Set"
		}
		et := ttype(kindOf(r.Elem, false))
		l := fg.local("l")
		fg.p("{")
		fg.p("et, size, n, err := %s.Read%sBegin(b[off:])", V, begin)
		fg.p("if err != nil { %s }", fg.errReturn())
		fg.p("off += n")
		fg.p("if size != 0 && et != %s { return off, %s }", et, errElemType(where, strings.ToLower(begin), "et", et))
		fg.p("%s := make(%s, size)", l, fg.goType(t, key))
		if name, st := fg.bulkPrim(pr, r.Elem); name != "" {
			fg.p("n, err = %s.Read%sSlice(b[off:], %s)", V, name, fg.asSlice(t, l, st))
			fg.p("if err != nil { %s }", fg.errReturn())
			fg.p("off += n")
		} else {
			i := fg.local("i")
			arr := fg.structArray(r.Elem)
			fg.p("for %s := range %s {", i, l)
			if arr != "" {
				fg.structChunk(r.Elem, arr, i)
			}
			fg.readValue(pr, r.Elem, false, where+" element", l+"["+i+"]", func(e string) { fg.p("%s[%s] = %s", l, i, e) })
			if arr != "" {
				fg.p("%s = %s[1:]", arr, arr)
			}
			fg.p("}")
		}
		set(l)
		fg.p("}")
	case wMap:
		r := t.Resolved()
		kt, vt := ttype(kindOf(r.Key, true)), ttype(kindOf(r.Elem, false))
		m := fg.local("m")
		fg.p("{")
		fg.p("kt, vt, size, n, err := %s.ReadMapBegin(b[off:])", V)
		fg.p("if err != nil { %s }", fg.errReturn())
		fg.p("off += n")
		fg.p("if size != 0 && kt != %s { return off, %s }", kt, errElemType(where, "map key", "kt", kt))
		fg.p("if size != 0 && vt != %s { return off, %s }", vt, errElemType(where, "map value", "vt", vt))
		// A map grows by itself past its first make.
		hint := mapHint(elemSize(r.Key, true), elemSize(r.Elem, false), fixedOf(pr, kindOf(r.Key, true)), fixedOf(pr, kindOf(r.Elem, false)))
		fg.p("%s := make(%s, %s)", m, fg.goType(t, key), hint)
		i, kv := fg.local("i"), fg.local("k")
		arr := fg.structArray(r.Elem)
		fg.p("for %s := 0; %s < size; %s++ {", i, i, i)
		fg.p("var %s %s", kv, fg.goType(r.Key, true))
		fg.readValue(pr, r.Key, true, where+" key", kv, func(e string) { fg.p("%s = %s", kv, e) })
		if arr != "" {
			fg.structChunk(r.Elem, arr, i)
		}
		fg.readValue(pr, r.Elem, false, where+" value", m+"["+kv+"]", func(e string) { fg.p("%s[%s] = %s", m, kv, e) })
		if arr != "" {
			fg.p("%s = %s[1:]", arr, arr)
		}
		fg.p("}")
		set(m)
		fg.p("}")
	default:
		fg.g.fail(t.Pos, "cannot read type %s", t)
	}
}
