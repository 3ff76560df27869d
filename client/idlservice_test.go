package client_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/metainfo"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/transport"
)

// newGeneratedStyle makes a client as a generated New<Service>Client of the
// IDL service idl does: the IDL name first, then the caller's options.
// destService is a deployment name, unlike the IDL's.
func newGeneratedStyle(tb testing.TB, idl, addr string, s setup, opts ...client.Option) *client.Client {
	tb.Helper()
	opts = append([]client.Option{client.WithIDLServiceName(idl), client.WithHostPorts(addr), client.WithTransport(s.proto), s.pool}, opts...)
	c, err := client.New("dest.cluster", opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// TestIDLServiceNameTravels: a generated-style client sends its IDL service
// name in TTHeader's "isn" on every call (with and without metainfo beside
// it); a later WithIDLServiceName replaces it and "" removes it; Framed and
// Buffered send no header.
func TestIDLServiceNameTravels(t *testing.T) {
	withMI := metainfo.WithValue(context.Background(), "k", "v")
	for _, s := range setups() {
		t.Run(s.name, func(t *testing.T) {
			for _, tc := range []struct {
				name string
				opts []client.Option
				want string // "": no isn
			}{
				{"generated", nil, "Hello"},
				{"replaced", []client.Option{client.WithIDLServiceName("Other")}, "Other"},
				{"removed", []client.Option{client.WithIDLServiceName("")}, ""},
			} {
				srv := startServer(t)
				c := newGeneratedStyle(t, "Hello", srv.Addr(), s, tc.opts...)
				for i, ctx := range []context.Context{context.Background(), withMI, context.Background()} {
					srv.lastMI.Store(map[string]string(nil))
					if _, err := echo(ctx, c, &echoArgs{Msg: []byte("x")}); err != nil {
						t.Fatalf("%s: call %d: %v", tc.name, i, err)
					}
					m, _ := srv.lastMI.Load().(map[string]string)
					got, ok := m[transport.StrKeyIDLService]
					want := tc.want
					if s.proto != transport.TTHeader {
						want = ""
					}
					if got != want || ok != (want != "") {
						t.Fatalf("%s: call %d: the server got isn %q (present %v), want %q; string keys %v", tc.name, i, got, ok, want, m)
					}
					if ctx == withMI && s.proto == transport.TTHeader && m[metainfo.PrefixTransient+"k"] != "v" {
						t.Fatalf("%s: call %d: the metainfo beside isn was lost: %v", tc.name, i, m)
					}
				}
			}
		})
	}
}

// taggedEcho answers "echo" with its tag before the message, to tell which
// service a call reached.
type taggedEcho struct{ tag string }

func taggedServiceInfo(name string) *thrift.ServiceInfo {
	return &thrift.ServiceInfo{
		Name: name,
		Methods: []thrift.MethodInfo{{
			Name:      "echo",
			NewArgs:   func() thrift.FastCodec { return new(echoArgs) },
			NewResult: func() thrift.FastCodec { return new(echoResult) },
			Handler: func(ctx context.Context, handler any, args, result thrift.FastCodec) error {
				res := result.(*echoResult)
				res.Success = append([]byte(handler.(*taggedEcho).tag+":"), args.(*echoArgs).Msg...)
				res.HasSuccess = true
				return nil
			},
		}},
	}
}

// TestSameMethodTwoServices: two services with a method of the same name on
// one Petrel server are each reached by their own generated-style client,
// whose callee name (a deployment name) names neither: the server routes by
// the IDL service name in TTHeader.
func TestSameMethodTwoServices(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(server.WithListener(ln))
	for _, name := range []string{"First", "Second"} {
		if err := srv.RegisterService(taggedServiceInfo(name), &taggedEcho{tag: name}); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run() }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Stop(ctx)
		<-done
	}()
	for _, s := range ttheaderSetups() {
		t.Run(s.name, func(t *testing.T) {
			for _, name := range []string{"Second", "First", "Second"} {
				c := newGeneratedStyle(t, name, ln.Addr().String(), s)
				for i := range 3 {
					res, err := echo(context.Background(), c, &echoArgs{Msg: []byte("m")})
					if err != nil {
						t.Fatalf("the client of %s, call %d: %v", name, i, err)
					}
					if got, want := string(res.Success), name+":m"; got != want {
						t.Fatalf("the client of %s, call %d: reply %q, want %q (another service got the call)", name, i, got, want)
					}
				}
			}
		})
	}
}

// TestIDLServiceNameAllocatesNothing: sending the IDL service name costs no
// allocation per call once the call state's header map exists (the test
// server runs in a child process, so that only the client's allocations
// count; the race detector's sync.Pool drops call states at random).
func TestIDLServiceNameAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	addr := startServerProcess(t, "test")
	for _, s := range []setup{ttheaderSetups()[1], ttheaderSetups()[2]} {
		t.Run(s.name, func(t *testing.T) {
			args := &echoArgs{Msg: []byte("hello")}
			res := &echoResult{Success: make([]byte, 0, 64)}
			ctx := context.Background()
			allocs := func(c *client.Client) float64 {
				call := func() {
					if err := c.Call(ctx, "echo", false, args, res); err != nil {
						t.Fatal(err)
					}
				}
				for range 50 { // warm pools, maps and buffers
					call()
				}
				return testing.AllocsPerRun(200, call)
			}
			without := allocs(newClient(t, addr, s))
			with := allocs(newGeneratedStyle(t, "Echo", addr, s))
			t.Logf("%s: %v allocations per call without isn, %v with", s.name, without, with)
			if with > without {
				t.Errorf("%s: a call sending isn allocates %v times, %v without", s.name, with, without)
			}
		})
	}
}
