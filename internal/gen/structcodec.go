package gen

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/petrel-rpc/petrel/idl/thrift"
)

// Code fragments for the checks generated readers make. They call the
// codec so that error messages and limits live in one place.

// depthCheck is the first statement of FastReadDepth: the struct at depth
// (1 for the outermost) must not nest deeper than the codec's MaxDepth.
func depthCheck() string {
	return "if err := thrift.CheckDepth(depth); err != nil { return 0, err }"
}

// errMissing returns the error expression for a required field absent from
// the input.
func errMissing(structName, field string) string {
	return "thrift.MissingRequiredError(" + strconv.Quote(structName) + ", " + strconv.Quote(field) + ")"
}

// errElemType returns the error expression for a container whose declared
// element type (in variable got) is not want.
func errElemType(where, what, got, want string) string {
	return "thrift.ElemTypeError(" + strconv.Quote(where+" ("+what+")") + ", " + got + ", " + want + ")"
}

// codecCopyStruct says whether the codec offers CopyStruct; without it the
// same logic is emitted inline.
const codecCopyStruct = false

// copyStruct returns the expression of a private copy of the struct at the
// start of b (emitting the statements it needs first): the struct's bytes
// only, found with a Skip pass when b is large.
func (fg *fileGen) copyStruct(pr proto) string {
	if codecCopyStruct {
		return pr.v() + ".CopyStruct(b)"
	}
	fg.p("if len(b) > 4096 {")
	fg.p("if n, err := %s.SkipDepth(b, thrift.STRUCT, 0); err == nil {", pr.v())
	fg.p("b = b[:n]")
	fg.p("}")
	fg.p("}")
	return "append([]byte(nil), b...)"
}

// genBinaryCodec writes BLength, FastWrite, FastWriteNocopy, FastRead and
// FastReadDepth.
func (fg *fileGen) genBinaryCodec(s *thrift.Struct) {
	name := fg.g.names[s]
	pr := binaryProto
	fields := writeOrder(s)

	// BLength: one constant for every fixed-size part, code for the rest.
	c := 1 // field stop
	body := fg.capture(func() {
		for _, fl := range fields {
			k := kindOf(fl.Type, false)
			_ = k
			if !fieldOptional(s, fl) {
				c += 3 + fg.lenValue(pr, fl.Type, false, fg.fieldValue(s, fl))
				continue
			}
			var vc int
			inner := fg.capture(func() { vc = fg.lenValue(pr, fl.Type, false, fg.fieldValue(s, fl)) })
			fg.p("if p.%s != nil {", fg.fieldGoName(s, fl))
			fg.p("l += %d", 3+vc)
			fg.write(inner)
			fg.p("}")
		}
		if fg.g.opt.KeepUnknown {
			fg.p("l += len(p._unknownFields)")
		}
	})
	fg.p("// BLength returns the size of p in the binary protocol.")
	fg.p("func (p *%s) BLength() int {", name)
	fg.p("if p == nil { return 1 }")
	fg.p("l := %d", c)
	fg.write(body)
	fg.p("return l")
	fg.p("}")
	fg.p("")

	fg.p("// FastWrite writes p in the binary protocol at b[0:], which holds at least")
	fg.p("// p.BLength() bytes, and returns the bytes written.")
	fg.p("func (p *%s) FastWrite(b []byte) int {", name)
	fg.nocopy = false
	fg.writeBody(s, fields)
	fg.p("}")
	fg.p("")
	fg.p("// FastWriteNocopy is FastWrite that hands strings and binaries of at least")
	fg.p("// thrift.NocopyThreshold bytes to w by reference (w may be nil). b must")
	fg.p("// still hold p.BLength() bytes; the caller trims what is left unused.")
	fg.p("func (p *%s) FastWriteNocopy(b []byte, w thrift.NocopyWriter) int {", name)
	if fg.g.hasStrings(s) {
		fg.nocopy = true
		fg.writeBody(s, fields)
		fg.nocopy = false
	} else {
		fg.p("return p.FastWrite(b)")
	}
	fg.p("}")
	fg.p("")

	fg.genRead(s, pr)
}

// writeBody writes the statements of FastWrite (or FastWriteNocopy, when
// fg.nocopy is set). Fixed-size parts that follow each other are written as
// one run (see binRun).
func (fg *fileGen) writeBody(s *thrift.Struct, fields []*thrift.Field) {
	fg.p("if p == nil { return thrift.Binary.WriteFieldStop(b) }")
	fg.p("off := 0")
	r := &binRun{fg: fg}
	for _, fl := range fields {
		k := kindOf(fl.Type, false)
		opt := fieldOptional(s, fl)
		if opt {
			r.flush()
			fg.p("if p.%s != nil {", fg.fieldGoName(s, fl))
		}
		r.add(3, binCall("WriteFieldBegin", ttype(k), itoa(fl.ID)))
		fg.writeBinary(r, fl.Type, false, fg.fieldValue(s, fl))
		if opt {
			r.flush()
			fg.p("}")
		}
	}
	if fg.g.opt.KeepUnknown {
		r.flush()
		fg.p("off += copy(b[off:], p._unknownFields)")
	}
	r.add(1, binCall("WriteFieldStop"))
	r.flush()
	fg.p("return off")
}

// genRead writes FastRead and FastReadDepth (or their compact twins).
func (fg *fileGen) genRead(s *thrift.Struct, pr proto) {
	name := fg.g.names[s]
	suffix := ""
	protoName := "binary"
	if pr.compact {
		suffix = "Compact"
		protoName = "compact"
	}
	fg.p("// FastRead%s reads p in the %s protocol from b[0:] and returns the bytes consumed.", suffix, protoName)
	if fg.g.hasStrings(s) {
		fg.p("// Strings and binaries share one private copy of the struct's bytes (one")
		fg.p("// allocation for all of them), so b may be reused as soon as FastRead%s returns.", suffix)
		fg.p("func (p *%s) FastRead%s(b []byte) (int, error) {", name, suffix)
		fg.p("return p.FastReadDepth%s(%s, 1)", suffix, fg.copyStruct(pr))
		fg.p("}")
	} else {
		fg.p("func (p *%s) FastRead%s(b []byte) (int, error) { return p.FastReadDepth%s(b, 1) }", name, suffix, suffix)
	}
	fg.p("")
	fg.p("// FastReadWhole%s is FastRead%s for a b that holds p and nothing after it", suffix, suffix)
	fg.p("// worth keeping, such as a whole message payload (thrift.Unmarshal%s calls it).", suffix)
	if fg.g.hasStrings(s) {
		fg.p("// Its private copy is all of b, taken without the scan for p's end that")
		fg.p("// FastRead%s makes on large inputs.", suffix)
		fg.p("func (p *%s) FastReadWhole%s(b []byte) (int, error) {", name, suffix)
		fg.p("return p.FastReadDepth%s(append([]byte(nil), b...), 1)", suffix)
		fg.p("}")
	} else {
		fg.p("func (p *%s) FastReadWhole%s(b []byte) (int, error) { return p.FastReadDepth%s(b, 1) }", name, suffix, suffix)
	}
	fg.p("")
	fg.p("// FastReadDepth%s is FastRead%s for a struct nested depth levels deep (1 for", suffix, suffix)
	fg.p("// the outermost); it fails past the codec's MaxDepth. It does not copy b:")
	fg.p("// strings and binaries read alias it, so b must stay alive and unchanged")
	fg.p("// while p is in use.")
	fg.p("func (p *%s) FastReadDepth%s(b []byte, depth int) (int, error) {", name, suffix)
	fg.p("%s", depthCheck())
	var required []*thrift.Field
	for _, fl := range s.Fields {
		if fl.Required == thrift.Required && s.Kind != thrift.StructKindUnion {
			required = append(required, fl)
			fg.p("isset%s := false", fg.fieldGoName(s, fl))
		}
	}
	hasBool := false
	for _, fl := range s.Fields {
		if kindOf(fl.Type, false) == wBool {
			hasBool = true
		}
	}
	// Optional scalars are pointers: when a struct has several, their values
	// share one block, allocated when the first is read.
	// So do the structs held directly in fields that are not optional (an
	// optional struct, often absent, would cost its size for nothing).
	optSlots := map[*thrift.Field]string{}
	var ptrs []*thrift.Field
	for _, fl := range s.Fields {
		if fieldPointer(s, fl) || kindOf(fl.Type, false) == wStruct && !fieldOptional(s, fl) {
			ptrs = append(ptrs, fl)
		}
	}
	if len(ptrs) >= 2 {
		// Equal-length names, so that gofmt has nothing to align.
		fg.p("type optionals struct {")
		for i, fl := range ptrs {
			optSlots[fl] = fmt.Sprintf("f%04d", i)
			fg.p("%s %s", optSlots[fl], strings.TrimPrefix(fg.goType(fl.Type, false), "*"))
		}
		fg.p("}")
		fg.p("var opt *optionals")
	}
	keep := fg.g.opt.KeepUnknown
	if keep {
		// Both forms: each unknown field is kept in the binary and the
		// compact protocol, so that either writer writes what was read.
		// Fresh buffers, not [:0]: a copy of the struct kept from an
		// earlier read (rec is read into again and appended to a slice,
		// say) would share them and see this read's bytes.
		fg.p("p._unknownFields = nil")
		fg.p("p._unknownFieldsCompact = nil")
	}
	fg.p("off := 0")
	if pr.compact {
		fg.p("var last int16")
	}
	fg.p("for {")
	if keep && !pr.compact {
		fg.p("fstart := off")
	}
	if pr.compact {
		bv := "_"
		if hasBool || keep {
			bv = "bv"
		}
		fg.p("t, id, %s, hb, n, err := thrift.Compact.ReadFieldBegin(b[off:], last)", bv)
	} else {
		fg.p("t, id, n, err := thrift.Binary.ReadFieldBegin(b[off:])")
	}
	fg.p("if err != nil { return off, err }")
	fg.p("off += n")
	fg.p("if t == thrift.STOP { break }")
	if pr.compact {
		fg.p("last = id")
	}
	fg.p("switch id {")
	for _, fl := range s.Fields {
		k := kindOf(fl.Type, false)
		fn := fg.fieldGoName(s, fl)
		where := s.Name + "." + fl.Name
		fg.p("case %d:", fl.ID)
		fg.p("if t == %s {", ttype(k))
		set := func(e string) {
			if fieldPointer(s, fl) {
				tmp := fg.local("tmp")
				fg.p("%s := %s", tmp, e)
				fg.p("p.%s = &%s", fn, tmp)
			} else {
				fg.p("p.%s = %s", fn, e)
			}
		}
		target := ""
		if !fieldPointer(s, fl) {
			target = "p." + fn
		}
		slot := optSlots[fl]
		if slot != "" {
			// The value lives in the struct's shared block.
			fg.p("if opt == nil { opt = new(optionals) }")
			if k == wStruct {
				fg.slot = "opt." + slot
				fg.slotReset = true // the field may come twice
				slot = ""
			} else {
				target = "opt." + slot
				set = func(e string) { fg.p("opt.%s = %s", slot, e) }
			}
		}
		fg.field = where
		if pr.compact && k == wBool {
			fg.p("if hb {")
			set(fg.fromPrim(fl.Type, false, "bv"))
			fg.p("} else {")
			fg.readValue(pr, fl.Type, false, where, target, set)
			fg.p("}")
		} else {
			fg.readValue(pr, fl.Type, false, where, target, set)
		}
		fg.field = ""
		if slot != "" {
			fg.p("p.%s = &opt.%s", fn, slot)
		}
		if fl.Required == thrift.Required && s.Kind != thrift.StructKindUnion {
			fg.p("isset%s = true", fn)
		}
		fg.p("continue")
		fg.p("}")
	}
	fg.p("}")
	if pr.compact {
		if keep {
			fg.p("vstart := off")
		}
		fg.p("if t != thrift.BOOL || !hb {")
		fg.p("n, err = thrift.Compact.SkipDepth(b[off:], t, depth)")
		fg.p("if err != nil { return off, err }")
		fg.p("off += n")
		fg.p("}")
		if keep {
			fg.p("p._unknownFieldsCompact = thrift.Compact.AppendUnknownField(p._unknownFieldsCompact, t, id, bv, b[vstart:off])")
			fg.p("if p._unknownFields, err = thrift.Binary.AppendUnknownFromCompact(p._unknownFields, t, id, bv, b[vstart:off]); err != nil { return off, err }")
		}
	} else {
		fg.p("n, err = thrift.Binary.SkipDepth(b[off:], t, depth)")
		fg.p("if err != nil { return off, err }")
		fg.p("off += n")
		if keep {
			fg.p("p._unknownFields = append(p._unknownFields, b[fstart:off]...)")
			fg.p("if p._unknownFieldsCompact, err = thrift.Compact.AppendUnknownFromBinary(p._unknownFieldsCompact, t, id, b[off-n:off]); err != nil { return off, err }")
		}
	}
	fg.p("}")
	for _, fl := range required {
		fg.p("if !isset%s { return off, %s }", fg.fieldGoName(s, fl), errMissing(s.Name, fl.Name))
	}
	fg.p("return off, nil")
	fg.p("}")
	fg.p("")
}
