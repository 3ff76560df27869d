package codecsize_test

import (
	"testing"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/internal/codecsize"
)

type sized struct {
	thrift.FastCodec
	n     int
	panic bool
}

func (s sized) BLength() int {
	if s.panic {
		panic("bad codec")
	}
	return s.n
}

func TestOf(t *testing.T) {
	if n := codecsize.Of(sized{n: 7}); n != 7 {
		t.Errorf("Of = %d, want 7", n)
	}
	if n := codecsize.Of(sized{panic: true}); n != 0 {
		t.Errorf("Of of a panicking BLength = %d, want 0", n)
	}
}
