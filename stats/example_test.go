package stats_test

import (
	"context"
	"fmt"
	"time"

	"github.com/petrel-rpc/petrel/stats"
)

// slowCalls reports the calls slower than a threshold.
type slowCalls struct{ over time.Duration }

func (s slowCalls) Start(ctx context.Context) context.Context { return ctx }

func (s slowCalls) Finish(ctx context.Context, st *stats.Stats) {
	if st.Latency() > s.over {
		fmt.Printf("slow %s call: %v, %d bytes in, %d out\n", st.Side, st.Latency(), st.RequestSize, st.ResponseSize)
	}
}

// A Tracer is passed to client.WithTracer or server.WithTracer; here it is
// driven by hand.
func ExampleTracer() {
	var tr stats.Tracer = slowCalls{over: time.Millisecond}
	t0 := time.Unix(0, 0)
	ctx := tr.Start(context.Background())
	tr.Finish(ctx, &stats.Stats{Side: stats.Client, Begin: t0, End: t0.Add(5 * time.Millisecond), RequestSize: 12, ResponseSize: 40})
	tr.Finish(ctx, &stats.Stats{Side: stats.Client, Begin: t0, End: t0.Add(time.Microsecond)})
	// Output:
	// slow client call: 5ms, 12 bytes in, 40 out
}
