package thrift_test

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/codec/thrift"
)

// A depth limit meant as "no limit" must not let one message recurse until
// Go's 1 GB stack ceiling aborts the process: Validate refuses MaxDepth over
// MaxDepthCeiling, and Skip bounds its maxDepth argument by it.
func TestDepthCeiling(t *testing.T) {
	bad := thrift.Limits{MaxDepth: math.MaxInt32}
	err := bad.Validate()
	if err == nil || !strings.Contains(err.Error(), "MaxDepth") {
		t.Fatalf("Validate(%+v) = %v, want an error naming MaxDepth", bad, err)
	}
	if err := thrift.SetLimits(bad); err == nil {
		t.Fatalf("SetLimits(%+v) = nil", bad)
	}
	if err := (thrift.Limits{MaxDepth: thrift.MaxDepthCeiling}).Validate(); err != nil {
		t.Fatalf("MaxDepth at the ceiling: %v", err)
	}
	// 8 Mi nested one-element lists, one byte each in the compact protocol.
	in := bytes.Repeat([]byte{0x19}, 8<<20)
	if _, err := thrift.Compact.Skip(in, thrift.LIST, math.MaxInt); thrift.KindOf(err) != thrift.DepthLimit {
		t.Fatalf("Skip with maxDepth MaxInt of %d nested lists: %v, want DepthLimit", len(in), err)
	}
	if _, err := thrift.Compact.SkipDepth(in, thrift.LIST, math.MinInt32); thrift.KindOf(err) != thrift.DepthLimit {
		t.Fatalf("SkipDepth with a negative depth: %v, want DepthLimit", err)
	}
}
