package thrift_test

import (
	"errors"
	"testing"

	"github.com/petrel-rpc/petrel/codec/thrift"
)

// readRecorder is a FastCodec that records which read method was called.
type readRecorder struct {
	called string
	n      int
}

func (r *readRecorder) BLength() int           { return 1 }
func (r *readRecorder) FastWrite(b []byte) int { return thrift.Binary.WriteFieldStop(b) }
func (r *readRecorder) FastRead(b []byte) (int, error) {
	r.called, r.n = "FastRead", len(b)
	return len(b), nil
}

// wholeRecorder also implements WholeReader and WholeCompactReader.
type wholeRecorder struct{ readRecorder }

func (r *wholeRecorder) FastReadWhole(b []byte) (int, error) {
	r.called, r.n = "FastReadWhole", len(b)
	return len(b), nil
}

func (r *wholeRecorder) BLengthCompact() int           { return 1 }
func (r *wholeRecorder) FastWriteCompact(b []byte) int { return thrift.Compact.WriteFieldStop(b) }
func (r *wholeRecorder) FastReadCompact(b []byte) (int, error) {
	r.called = "FastReadCompact"
	return len(b), nil
}

func (r *wholeRecorder) FastReadWholeCompact(b []byte) (int, error) {
	r.called = "FastReadWholeCompact"
	return 0, errors.New("whole compact")
}

func TestUnmarshalPrefersWholeReader(t *testing.T) {
	in := []byte{0, 1, 2}
	var plain readRecorder
	if err := thrift.Unmarshal(in, &plain); err != nil || plain.called != "FastRead" || plain.n != 3 {
		t.Errorf("Unmarshal of a plain FastCodec: called %q with %d bytes, err %v; want FastRead with 3", plain.called, plain.n, err)
	}
	var whole wholeRecorder
	if err := thrift.Unmarshal(in, &whole); err != nil || whole.called != "FastReadWhole" || whole.n != 3 {
		t.Errorf("Unmarshal of a WholeReader: called %q with %d bytes, err %v; want FastReadWhole with 3", whole.called, whole.n, err)
	}
	err := thrift.UnmarshalCompact(in, &whole)
	if whole.called != "FastReadWholeCompact" || err == nil || err.Error() != "whole compact" {
		t.Errorf("UnmarshalCompact of a WholeCompactReader: called %q, err %v; want FastReadWholeCompact and its error", whole.called, err)
	}
}
