package gen

import (
	"github.com/petrel-rpc/petrel/idl/thrift"
)

// Compact field headers encode the id as a delta from the previous field's
// id when it is 1..15 (one byte), else in the long form (a type byte and a
// zigzag varint id). The generator knows the previous id at generation time
// as long as every field before is always written; after an optional field
// it tracks it at run time in a variable named last.

// headerState follows the previous field id through the fields of a struct.
type headerState struct {
	known    bool // the previous id is known at generation time
	last     int  // that id, when known
	declared bool // the run-time variable last is declared
}

// lastExpr returns the expression of the previous field id.
func (h *headerState) lastExpr() string {
	if h.known {
		return itoa(h.last)
	}
	return "last"
}

// beforeOptional makes the run-time variable hold the previous id before an
// optional field (which may or may not update it).
func (h *headerState) beforeOptional(fg *fileGen) {
	if !h.known {
		return
	}
	if !h.declared {
		fg.p("last := int16(%d)", h.last)
		fg.p("_ = last")
		h.declared = true
	} else {
		fg.p("last = %d", h.last)
	}
}

// after records that field id was (maybe, if optional) written.
func (h *headerState) after(fg *fileGen, id int, optional bool) {
	if optional {
		fg.p("last = %d", id)
		h.known = false
		return
	}
	h.known, h.last = true, id
}

// compactHeaderLen returns the size of a compact field header for id after
// last.
func compactHeaderLen(id, last int) int {
	if id > last && id-last <= 15 {
		return 1
	}
	z := uint32(uint16(int16(id)<<1) ^ uint16(int16(id)>>15))
	n := 1
	for z >= 0x80 {
		z >>= 7
		n++
	}
	return 1 + n
}

// genCompactCodec writes BLengthCompact, FastWriteCompact, FastReadCompact
// and FastReadDepthCompact.
func (fg *fileGen) genCompactCodec(s *thrift.Struct) {
	name := fg.g.names[s]
	pr := compactProto
	fields := writeOrder(s)

	c := 1 // field stop
	h := &headerState{known: true}
	body := fg.capture(func() {
		for _, fl := range fields {
			k := kindOf(fl.Type, false)
			opt := fieldOptional(s, fl)
			var vc int
			inner := ""
			if k != wBool { // a bool field's value lives in its header
				inner = fg.capture(func() { vc = fg.lenValue(pr, fl.Type, false, fg.fieldValue(s, fl)) })
			}
			if !opt {
				if h.known {
					c += compactHeaderLen(fl.ID, h.last)
				} else {
					fg.p("l += thrift.Compact.FieldBeginLength(%s, %d, last)", ttype(k), fl.ID)
				}
				c += vc
				fg.write(inner)
				h.after(fg, fl.ID, false)
				continue
			}
			h.beforeOptional(fg)
			fg.p("if p.%s != nil {", fg.fieldGoName(s, fl))
			if h.known {
				fg.p("l += %d", compactHeaderLen(fl.ID, h.last)+vc)
			} else {
				fg.p("l += thrift.Compact.FieldBeginLength(%s, %d, last) + %d", ttype(k), fl.ID, vc)
			}
			fg.write(inner)
			h.after(fg, fl.ID, true)
			fg.p("}")
		}
		if fg.g.opt.KeepUnknown {
			fg.p("l += len(p._unknownFieldsCompact)")
		}
	})
	fg.p("// BLengthCompact returns the size of p in the compact protocol.")
	fg.p("func (p *%s) BLengthCompact() int {", name)
	fg.p("if p == nil { return 1 }")
	fg.p("l := %d", c)
	fg.write(body)
	fg.p("return l")
	fg.p("}")
	fg.p("")

	fg.p("// FastWriteCompact writes p in the compact protocol at b[0:], which holds at")
	fg.p("// least p.BLengthCompact() bytes, and returns the bytes written.")
	fg.p("func (p *%s) FastWriteCompact(b []byte) int {", name)
	fg.p("if p == nil { return thrift.Compact.WriteFieldStop(b) }")
	fg.p("off := 0")
	h = &headerState{known: true}
	for _, fl := range fields {
		k := kindOf(fl.Type, false)
		opt := fieldOptional(s, fl)
		if opt {
			h.beforeOptional(fg)
			fg.p("if p.%s != nil {", fg.fieldGoName(s, fl))
		}
		if k == wBool {
			fg.p("off += thrift.Compact.WriteFieldBool(b[off:], %d, %s, %s)", fl.ID, h.lastExpr(), fg.toPrim(fl.Type, false, fg.fieldValue(s, fl)))
		} else {
			fg.p("off += thrift.Compact.WriteFieldBegin(b[off:], %s, %d, %s)", ttype(k), fl.ID, h.lastExpr())
			fg.writeValue(pr, fl.Type, false, fg.fieldValue(s, fl))
		}
		h.after(fg, fl.ID, opt)
		if opt {
			fg.p("}")
		}
	}
	if fg.g.opt.KeepUnknown {
		fg.p("off += copy(b[off:], p._unknownFieldsCompact)")
	}
	fg.p("off += thrift.Compact.WriteFieldStop(b[off:])")
	fg.p("return off")
	fg.p("}")
	fg.p("")

	fg.genRead(s, pr)
}
