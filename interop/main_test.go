package interop_test

import (
	"testing"
	"time"

	athrift "github.com/apache/thrift/lib/go/thrift"
	"go.uber.org/goleak"
)

// apacheStopTimeout bounds how long an Apache TSimpleServer's Stop waits
// for its clients to close their connections; the RPC tests fail when a
// Stop takes that long (a Petrel client left a connection open).
const apacheStopTimeout = 3 * time.Second

func TestMain(m *testing.M) {
	// Set before any server runs: Apache's Stop reads it. By default Stop
	// waits for ever for open connections.
	athrift.ServerStopTimeout = apacheStopTimeout
	goleak.VerifyTestMain(m)
}
