package interop_test

// RPC interop beyond the plain calls of rpc_test.go: large values split
// across many reads, many connections at once, Apache's multiplexed
// protocol, Apache protocols Petrel does not speak, the message size limit,
// and an Apache server dropping the connection mid-call.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	athrift "github.com/apache/thrift/lib/go/thrift"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/codec/thrift"
	ae "github.com/petrel-rpc/petrel/interop/gen-apache/everything"
	pe "github.com/petrel-rpc/petrel/interop/gen-petrel/everything"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/transport"
)

// largeValue is about 1.3 MiB on the wire: a 1 MiB binary, 20,000 i64s and
// 5,000 strings, so that a message spans many socket reads (Buffered has no
// length to wait for: Petrel finds its end by walking it).
func largeValue() *pe.Everything {
	v := fullValue()
	v.Blob = make([]byte, 1<<20)
	for i := range v.Blob {
		v.Blob[i] = byte(i * 7)
	}
	v.Longs = make([]int64, 20_000)
	for i := range v.Longs {
		v.Longs[i] = int64(i) * -1_000_003
	}
	v.Strings = make([]string, 5_000)
	for i := range v.Strings {
		v.Strings[i] = fmt.Sprintf("string number %d", i)
	}
	return v
}

// TestLargeValues sends largeValue both ways over Framed and Buffered.
func TestLargeValues(t *testing.T) {
	v := largeValue()
	for _, p := range []transport.Protocol{transport.Framed, transport.Buffered} {
		framed := p == transport.Framed
		t.Run("apache-to-petrel/"+p.String(), func(t *testing.T) {
			h := newPetrelHandler()
			c := dialApache(t, startPetrel(t, h), framed)
			for i := range 2 {
				h.echoes.expect(v)
				got, err := c.Echo(context.Background(), toApache(v))
				if err != nil {
					t.Fatalf("echo %d: %v", i, err)
				}
				h.echoes.check(t, "large echo")
				if d := diffEverything(got, toApache(v)); d != "" {
					t.Errorf("echo %d: Apache got back a different value: %s", i, d)
				}
			}
		})
		t.Run("petrel-to-apache/"+p.String(), func(t *testing.T) {
			h := newApacheHandler()
			addr := startApache(t, h, framed)
			c, err := pe.NewInteropServiceClient("InteropService", client.WithHostPorts(addr),
				client.WithTransport(p), client.WithRPCTimeout(callTimeout))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			for i := range 2 {
				h.echoes.expect(toApache(v))
				got, err := c.Echo(context.Background(), v)
				if err != nil {
					t.Fatalf("echo %d: %v", i, err)
				}
				h.echoes.check(t, "large echo")
				if d := diffEverything(got, v); d != "" {
					t.Errorf("echo %d: Petrel got back a different value: %s", i, d)
				}
			}
		})
	}
}

// TestManyConnections: several Apache clients call one Petrel server at once
// (Framed and Buffered connections mixed), and one Petrel client calls an
// Apache server from several goroutines (its pool opens several
// connections); every reply is the one for its own request.
func TestManyConnections(t *testing.T) {
	const conns, calls = 8, 40
	t.Run("apache-to-petrel", func(t *testing.T) {
		addr := startPetrel(t, newPetrelHandler())
		clients := make([]func(ctx context.Context, a int32, b int64) (int64, error), conns)
		for i := range clients {
			clients[i] = dialApache(t, addr, i%2 == 0).Add
		}
		runConcurrently(t, clients, calls)
	})
	for _, p := range []transport.Protocol{transport.Framed, transport.Buffered} {
		t.Run("petrel-to-apache/"+p.String(), func(t *testing.T) {
			addr := startApache(t, newApacheHandler(), p == transport.Framed)
			c, err := pe.NewInteropServiceClient("InteropService", client.WithHostPorts(addr),
				client.WithTransport(p), client.WithRPCTimeout(callTimeout))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			clients := make([]func(ctx context.Context, a int32, b int64) (int64, error), conns)
			for i := range clients {
				clients[i] = func(ctx context.Context, a int32, b int64) (int64, error) { return c.Add(ctx, a, b) }
			}
			runConcurrently(t, clients, calls)
		})
	}
}

// runConcurrently runs each add function in its own goroutine, calls times
// each, with arguments unique to the call, and checks every sum.
func runConcurrently(t *testing.T, adds []func(ctx context.Context, a int32, b int64) (int64, error), calls int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(adds))
	for g, add := range adds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				a, b := int32(g*1000+i), int64(g)<<40
				sum, err := add(context.Background(), a, b)
				if err == nil && sum != int64(a)+b {
					err = fmt.Errorf("add(%d, %d) = %d: a reply to another call", a, b, sum)
				}
				if err != nil {
					errs <- fmt.Errorf("goroutine %d call %d: %w", g, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestApacheMultiplexedClient: Apache's TMultiplexedProtocol names methods
// "InteropService:echo"; Petrel's server serves them as the service's
// methods and answers an unknown service with UNKNOWN_METHOD.
func TestApacheMultiplexedClient(t *testing.T) {
	h := newPetrelHandler()
	addr := startPetrel(t, h)
	dial := func(service string) *ae.InteropServiceClient {
		return dialApacheWith(t, addr, func(sock athrift.TTransport, conf *athrift.TConfiguration) (athrift.TTransport, athrift.TProtocol) {
			trans := athrift.NewTFramedTransportConf(sock, conf)
			return trans, athrift.NewTMultiplexedProtocol(athrift.NewTBinaryProtocolConf(trans, conf), service)
		})
	}
	c := dial("InteropService")
	ctx := context.Background()
	v := fullValue()
	h.echoes.expect(v)
	got, err := c.Echo(ctx, toApache(v))
	if err != nil {
		t.Fatal(err)
	}
	h.echoes.check(t, "multiplexed echo")
	if d := diffEverything(got, toApache(v)); d != "" {
		t.Errorf("multiplexed echo: %s", d)
	}
	var oops *ae.Oops
	if _, err := c.Echo(ctx, toApache(withText(textOops))); !errors.As(err, &oops) || oops.Code != oopsCode {
		t.Errorf("multiplexed echo returning Oops: %v", err)
	}
	if err := c.Notify(ctx, "multiplexed note"); err != nil {
		t.Fatal(err)
	}
	waitNotified(t, h.notified, "multiplexed note")

	// An unknown service: Apache's multiplexed processor closes the
	// connection; Petrel answers UNKNOWN_METHOD. Either way the call fails
	// at once.
	start := time.Now()
	if err := dial("OtherService").Ping(ctx); err == nil {
		t.Errorf("ping of an unknown service succeeded")
	} else if d := time.Since(start); d > callTimeout/2 {
		t.Errorf("ping of an unknown service failed only after %v: %v", d, err)
	}
	// The server still serves the multiplexed client.
	if err := dial("InteropService").Ping(ctx); err != nil {
		t.Errorf("ping after the unknown service: %v", err)
	}

	// An unknown method of a known service: Apache's own multiplexed
	// processor answers UNKNOWN_METHOD under the bare method name. (Last:
	// with the bug below, c's connection falls out of step.)
	_, err = c.Client_().Call(ctx, "noSuchMethod", ae.NewInteropServicePingArgs(), ae.NewInteropServicePingResult())
	checkMultiplexedUnknown(t, "InteropService:noSuchMethod", err)
}

// checkMultiplexedUnknown checks that a multiplexed Apache client got
// UNKNOWN_METHOD for what: Petrel's server answers an unknown "Svc:method"
// under the bare method name, as the client expects.
func checkMultiplexedUnknown(t *testing.T, what string, err error) {
	t.Helper()
	ex, ok := apacheAppException(err)
	if !ok || ex.TypeId() != athrift.UNKNOWN_METHOD {
		t.Errorf("%s: Apache got %v (%T), want UNKNOWN_METHOD", what, err, err)
	}
}

// TestApacheProtocolsPetrelRefuses: Apache clients speaking what Petrel's
// server does not (Apache THeader, unframed compact, non-strict binary)
// fail promptly (the server closes the connection; no hang until the
// client's socket timeout), and the server keeps serving everyone else.
func TestApacheProtocolsPetrelRefuses(t *testing.T) {
	addr := startPetrel(t, newPetrelHandler())
	type stack = func(athrift.TTransport, *athrift.TConfiguration) (athrift.TTransport, athrift.TProtocol)
	cases := []struct {
		name string
		wrap stack
	}{
		{"theader", func(sock athrift.TTransport, conf *athrift.TConfiguration) (athrift.TTransport, athrift.TProtocol) {
			p := athrift.NewTHeaderProtocolConf(sock, conf)
			return p.Transport(), p
		}},
		{"buffered-compact", func(sock athrift.TTransport, conf *athrift.TConfiguration) (athrift.TTransport, athrift.TProtocol) {
			trans := athrift.NewTBufferedTransport(sock, 4096)
			return trans, athrift.NewTCompactProtocolConf(trans, conf)
		}},
		{"buffered-nonstrict-binary", func(sock athrift.TTransport, conf *athrift.TConfiguration) (athrift.TTransport, athrift.TProtocol) {
			trans := athrift.NewTBufferedTransport(sock, 4096)
			return trans, athrift.NewTBinaryProtocol(trans, false, false)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dialApacheWith(t, addr, tc.wrap)
			start := time.Now()
			_, err := c.Add(context.Background(), 1, 2)
			if err == nil {
				t.Fatalf("Petrel's server answered a %s call", tc.name)
			}
			if d := time.Since(start); d > callTimeout/2 {
				t.Errorf("the %s call failed only after %v (%v): the server did not close the connection", tc.name, d, err)
			}
			if sum, err := dialApache(t, addr, true).Add(context.Background(), 1, 2); err != nil || sum != 3 {
				t.Errorf("a framed call after the %s one: %d, %v", tc.name, sum, err)
			}
		})
	}
}

// TestMessageSizeLimit: a request over Petrel's server's limit closes that
// connection (the Apache client gets an error, not a hang), a reply over
// Petrel's client's limit fails the call with a Protocol error
// (transport.ErrFrameTooLarge), and both sides go on serving.
func TestMessageSizeLimit(t *testing.T) {
	const limit = 64 << 10
	big := withText("request")
	big.Blob = make([]byte, 4*limit)
	t.Run("petrel-server", func(t *testing.T) {
		for _, framed := range []bool{true, false} {
			addr := startPetrel(t, newPetrelHandler(), server.WithMaxMessageSize(limit))
			c := dialApache(t, addr, framed)
			start := time.Now()
			if _, err := c.Echo(context.Background(), toApache(big)); err == nil {
				t.Errorf("framed %v: a request of %d bytes over a %d-byte limit was served", framed, len(big.Blob), limit)
			} else if d := time.Since(start); d > callTimeout/2 {
				t.Errorf("framed %v: the oversized request failed only after %v (%v)", framed, d, err)
			}
			if sum, err := dialApache(t, addr, framed).Add(context.Background(), 1, 2); err != nil || sum != 3 {
				t.Errorf("framed %v: a call after the oversized one: %d, %v", framed, sum, err)
			}
		}
	})
	for _, p := range []transport.Protocol{transport.Framed, transport.Buffered} {
		t.Run("petrel-client/"+p.String(), func(t *testing.T) {
			addr := startApache(t, newApacheHandler(), p == transport.Framed)
			c, err := pe.NewInteropServiceClient("InteropService", client.WithHostPorts(addr),
				client.WithTransport(p), client.WithRPCTimeout(callTimeout), client.WithMaxMessageSize(2*bigBlob))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			ctx := context.Background()
			c2, err := pe.NewInteropServiceClient("InteropService", client.WithHostPorts(addr),
				client.WithTransport(p), client.WithRPCTimeout(callTimeout), client.WithMaxMessageSize(bigBlob/2))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c2.Close() })
			if got, err := c.Echo(ctx, withText(textBig)); err != nil || len(got.Blob) != bigBlob {
				t.Fatalf("a %d-byte reply under the limit: %v", bigBlob, err)
			}
			_, err = c2.Echo(ctx, withText(textBig))
			if rpcerr.CodeOf(err) != rpcerr.Protocol || !errors.Is(err, transport.ErrFrameTooLarge) {
				t.Errorf("a %d-byte reply over a %d-byte limit: %v (code %v), want Protocol, ErrFrameTooLarge", bigBlob, bigBlob/2, err, rpcerr.CodeOf(err))
			}
			if sum, err := c2.Add(ctx, 1, 2); err != nil || sum != 3 {
				t.Errorf("a call after the oversized reply: %d, %v", sum, err)
			}
		})
	}
}

// TestApacheServerDropsConnection: an Apache handler returning
// ErrAbandonRequest makes Apache's server close the connection without a
// reply. Petrel's client reports a Connection error at once (not at its
// timeout) and the next call works on a new connection.
func TestApacheServerDropsConnection(t *testing.T) {
	for _, p := range []transport.Protocol{transport.Framed, transport.Buffered} {
		for _, cfg := range petrelClientConfigs(p) {
			t.Run(p.String()+"/"+cfg.name, func(t *testing.T) {
				addr := startApache(t, newApacheHandler(), p == transport.Framed)
				c, err := pe.NewInteropServiceClient("InteropService", append([]client.Option{client.WithHostPorts(addr)}, cfg.opts...)...)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				ctx := context.Background()
				if err := c.Ping(ctx); err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				_, err = c.Echo(ctx, withText(textAbort))
				var appEx *thrift.ApplicationException
				if err == nil || errors.As(err, &appEx) || rpcerr.CodeOf(err) != rpcerr.Connection {
					t.Errorf("a dropped connection: %v (%T, code %v), want a Connection error", err, err, rpcerr.CodeOf(err))
				}
				if d := time.Since(start); d > callTimeout/2 {
					t.Errorf("the dropped connection was noticed after %v", d)
				}
				for i := range 3 {
					if sum, err := c.Add(ctx, int32(i), 2); err != nil || sum != int64(i)+2 {
						t.Errorf("call %d after the dropped connection: %d, %v", i, sum, err)
					}
				}
			})
		}
	}
}

// TestApachePipelined: an Apache client writes many requests before reading
// any reply (Buffered: in one flush, so message boundaries fall anywhere in
// the server's reads; Framed: frame after frame), oneway calls, an unknown
// method and a failing call among them. Petrel's server answers every
// two-way call in order with its own sequence id and skips the oneway ones.
func TestApachePipelined(t *testing.T) {
	for _, framed := range []bool{true, false} {
		t.Run(map[bool]string{true: "framed", false: "buffered"}[framed], func(t *testing.T) {
			h := newPetrelHandler()
			addr := startPetrel(t, h)
			var proto athrift.TProtocol
			dialApacheWith(t, addr, func(sock athrift.TTransport, conf *athrift.TConfiguration) (athrift.TTransport, athrift.TProtocol) {
				trans := athrift.TTransport(athrift.NewTBufferedTransport(sock, 1<<16))
				if framed {
					trans = athrift.NewTFramedTransportConf(sock, conf)
				}
				proto = athrift.NewTBinaryProtocolConf(trans, conf)
				return trans, proto
			})
			ctx := context.Background()
			const n = 60
			kind := func(i int) string {
				switch {
				case i%7 == 3:
					return "notify"
				case i == 20:
					return "noSuchMethod"
				case i == 30:
					return "fail"
				}
				return "add"
			}
			write := func(name string, typ athrift.TMessageType, seq int32, args athrift.TStruct) {
				if err := proto.WriteMessageBegin(ctx, name, typ, seq); err != nil {
					t.Fatal(err)
				}
				if err := args.Write(ctx, proto); err != nil {
					t.Fatal(err)
				}
				if err := proto.WriteMessageEnd(ctx); err != nil {
					t.Fatal(err)
				}
				if framed { // one frame per message
					if err := proto.Flush(ctx); err != nil {
						t.Fatal(err)
					}
				}
			}
			for i := range n {
				seq := int32(1000 + i)
				switch kind(i) {
				case "notify":
					write("notify", athrift.ONEWAY, seq, &ae.InteropServiceNotifyArgs{Message: fmt.Sprint("pipelined ", i)})
				case "noSuchMethod":
					write("noSuchMethod", athrift.CALL, seq, ae.NewInteropServicePingArgs())
				case "fail":
					write("add", athrift.CALL, seq, &ae.InteropServiceAddArgs{A: -1})
				default:
					write("add", athrift.CALL, seq, &ae.InteropServiceAddArgs{A: int32(i), B: int64(i) << 33})
				}
			}
			if !framed { // (Apache's framed Flush with nothing written panics)
				if err := proto.Flush(ctx); err != nil {
					t.Fatal(err)
				}
			}
			sc := athrift.NewTStandardClient(proto, proto)
			for i := range n {
				seq := int32(1000 + i)
				switch kind(i) {
				case "notify":
					waitNotified(t, h.notified, fmt.Sprint("pipelined ", i))
				case "noSuchMethod":
					err := sc.Recv(ctx, proto, seq, "noSuchMethod", ae.NewInteropServicePingResult())
					if ex, ok := apacheAppException(err); !ok || ex.TypeId() != athrift.UNKNOWN_METHOD {
						t.Fatalf("reply %d: %v, want UNKNOWN_METHOD", i, err)
					}
				case "fail":
					err := sc.Recv(ctx, proto, seq, "add", ae.NewInteropServiceAddResult())
					if ex, ok := apacheAppException(err); !ok || ex.TypeId() != athrift.INTERNAL_ERROR {
						t.Fatalf("reply %d: %v, want INTERNAL_ERROR", i, err)
					}
				default:
					res := ae.NewInteropServiceAddResult()
					if err := sc.Recv(ctx, proto, seq, "add", res); err != nil {
						t.Fatalf("reply %d: %v", i, err)
					}
					if res.GetSuccess() != int64(i)+int64(i)<<33 {
						t.Fatalf("reply %d: sum %d, want %d", i, res.GetSuccess(), int64(i)+int64(i)<<33)
					}
				}
			}
		})
	}
}
