package buf_test

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/buf"
)

// TestMallocHugeIsAnError: a size no memory can hold (a length read from a
// corrupt frame, say) is refused with an error naming it instead of
// panicking in make.
func TestMallocHugeIsAnError(t *testing.T) {
	if strconv.IntSize < 64 {
		t.Skip("every int is a size a 32-bit heap may be asked for")
	}
	for _, n := range []int{math.MaxInt>>1 + 1, math.MaxInt, math.MinInt, -1} {
		b := buf.NewLinkBuffer()
		var (
			p   []byte
			err error
		)
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("Malloc(%d) panicked: %v", n, r)
				}
			}()
			p, err = b.Malloc(n)
		}()
		if err == nil || p != nil || !strings.Contains(err.Error(), "Malloc(") {
			t.Fatalf("Malloc(%d) = %d bytes, %v; want an error naming the call", n, len(p), err)
		}
		if b.MallocLen() != 0 {
			t.Fatalf("Malloc(%d) failed but MallocLen is %d", n, b.MallocLen())
		}
	}
}
