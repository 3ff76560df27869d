package client_test

import (
	"bytes"
	"context"
	"math"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/endpoint"
)

// TestHugeTimeouts: a timeout of math.MaxInt64 (or any ending past the year
// 2262, which a deadline in int64 nanoseconds cannot hold) means "wait as
// long as it takes", never "time out at once".
func TestHugeTimeouts(t *testing.T) {
	const centuries = 250 * 365 * 24 * time.Hour
	srv := startServer(t)
	big := bytes.Repeat([]byte("x"), 8<<20) // a flush that waits for the socket
	for _, s := range setups() {
		cases := map[string]struct {
			opt  client.Option
			copt client.CallOption
			ctx  bool
		}{
			"rpc timeout":    {opt: client.WithRPCTimeout(math.MaxInt64)},
			"method timeout": {opt: client.WithMethodTimeout("echo", centuries)},
			"call timeout":   {copt: client.WithCallTimeout(math.MaxInt64)},
			"context":        {ctx: true},
			"middleware":     {opt: client.WithMiddleware(hugeTimeoutMiddleware)},
		}
		for name, tc := range cases {
			t.Run(s.name+"/"+name, func(t *testing.T) {
				opts := []client.Option{client.WithRPCTimeout(0)}
				if tc.opt != nil {
					opts = append(opts, tc.opt)
				}
				c := newClient(t, srv.Addr(), s, opts...)
				ctx := context.Background()
				if tc.ctx {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, math.MaxInt64)
					defer cancel()
				}
				var copts []client.CallOption
				if tc.copt != nil {
					copts = append(copts, tc.copt)
				}
				for _, msg := range [][]byte{[]byte("small"), big} {
					res, err := echo(ctx, c, &echoArgs{Msg: msg, SleepMs: 20}, copts...)
					if err != nil {
						t.Fatalf("a call of %d bytes: %v", len(msg), err)
					}
					if !bytes.Equal(res.Success, msg) {
						t.Fatalf("a call of %d bytes got %d bytes back", len(msg), len(res.Success))
					}
				}
			})
		}
	}
}

// hugeTimeoutMiddleware gives the call a context whose deadline is
// math.MaxInt64 away.
func hugeTimeoutMiddleware(next endpoint.Endpoint) endpoint.Endpoint {
	return func(ctx context.Context, req, resp any) error {
		ctx, cancel := context.WithTimeout(ctx, math.MaxInt64)
		defer cancel()
		return next(ctx, req, resp)
	}
}
