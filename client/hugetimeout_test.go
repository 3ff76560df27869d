package client_test

import (
	"bytes"
	"context"
	"math"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/endpoint"
	"github.com/petrel-rpc/petrel/metainfo"
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

// TestHugeTimeoutThroughDerivingMiddleware: a timeout of math.MaxInt64 is
// in effect none for a call whose middleware derives a context (here:
// adding metainfo, as any tracing or metadata middleware does), which then
// hands invoke the deadline of the call's context. That context held its
// deadline as UnixNano, which overflowed into the 1700s, and every call
// failed at once as timed out.
func TestHugeTimeoutThroughDerivingMiddleware(t *testing.T) {
	srv := startServer(t)
	addMeta := func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, req, resp any) error {
			return next(metainfo.WithValue(ctx, "k", "v"), req, resp)
		}
	}
	for _, s := range setups() {
		t.Run(s.name, func(t *testing.T) {
			c := newClient(t, srv.Addr(), s, client.WithRPCTimeout(math.MaxInt64), client.WithMiddleware(addMeta))
			if _, err := echo(context.Background(), c, &echoArgs{Msg: []byte("hi")}); err != nil {
				t.Fatalf("a call with a timeout of math.MaxInt64: %v", err)
			}
		})
	}
}

// TestHugeTimeoutDeadlineSeenByMiddleware: the call's context's Deadline,
// which WithMiddleware's doc says is the call's, is not in the past for a
// timeout of math.MaxInt64 (it read as a date in 1734).
func TestHugeTimeoutDeadlineSeenByMiddleware(t *testing.T) {
	mw := func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, req, resp any) error {
			d, ok := ctx.Deadline()
			if ok && d.Year() < 2026 {
				t.Errorf("the call's context reports deadline %v for a timeout of math.MaxInt64", d)
			}
			return nil
		}
	}
	c, err := client.New("svc", client.WithHostPorts("127.0.0.1:1"), client.WithRPCTimeout(math.MaxInt64), client.WithMiddleware(mw))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Call(context.Background(), "m", false, nil, nil)
}
