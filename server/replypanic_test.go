package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

// halfPanickyResult is an echo result whose encoding, when told to, writes
// part of itself and then panics (a hand-written codec's bug).
type halfPanickyResult struct {
	echotest.EchoEchoResult
	panics bool
	late   bool // the whole reply written, large strings linked, then the panic
}

func (r *halfPanickyResult) FastWrite(b []byte) int {
	if r.panics {
		for i := range b[:len(b)/2] {
			b[i] = 0xee
		}
		panic("encoder bug")
	}
	return r.EchoEchoResult.FastWrite(b)
}

func (r *halfPanickyResult) FastWriteNocopy(b []byte, w thrift.NocopyWriter) int {
	if r.late {
		r.EchoEchoResult.FastWriteNocopy(b, w)
		panic("late encoder bug")
	}
	return r.FastWrite(b)
}

// TestReplyPanicKeepsOtherReplies: when the reply of one request panics
// while it is encoded, the replies of the requests read with it (written,
// not yet sent) still reach the client: their handlers ran, and a client
// must not take a call the server ran for one it did not. The request
// whose reply panicked is answered with an INTERNAL_ERROR saying so.
func TestReplyPanicKeepsOtherReplies(t *testing.T) {
	info := serviceInfo("HalfPanicky",
		method("echo", nil, func() thrift.FastCodec { return new(halfPanickyResult) }, func(args, result thrift.FastCodec) error {
			req, res := args.(*echotest.EchoEchoArgs).Req, result.(*halfPanickyResult)
			res.panics, res.late = req.Action == "panic", req.Action == "latepanic"
			res.Success = &echotest.Response{Msg: req.Msg}
			return nil
		}))
	for _, p := range protocols {
		t.Run(p.String(), func(t *testing.T) {
			s := server.New()
			addr, stop := serveInfo(t, s, info)
			defer stop(3 * time.Second)
			c := dial(t, addr, p)
			c.conn.SetReadTimeout(3 * time.Second)
			actions := []string{"echo", "panic", "echo", "latepanic", "echo"}
			for seq, action := range actions {
				args := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: action, Msg: strings.Repeat("m", 100<<10) + action}}
				h := &transport.Header{Protocol: p}
				if err := transport.WriteMessage(c.conn.Writer(), p, h, "echo", thrift.CALL, int32(seq), args); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.conn.Writer().Flush(); err != nil {
				t.Fatal(err)
			}
			got := map[int32]bool{}
			for range actions {
				res := new(echotest.EchoEchoResult)
				rep, err := c.recv(res)
				if err != nil {
					t.Fatalf("after replies for seqs %v: %v", got, err)
				}
				got[rep.seq] = true
				if rep.ex != nil {
					t.Logf("seq %d: %s", rep.seq, rep.ex.Message)
				}
				switch actions[rep.seq] {
				case "echo":
					if rep.typ != thrift.REPLY || res.Success.GetMsg() != strings.Repeat("m", 100<<10)+"echo" {
						t.Fatalf("seq %d: %+v %+v", rep.seq, rep, res)
					}
				default:
					if rep.ex == nil || rep.ex.Type != thrift.ExceptionInternalError || !strings.Contains(rep.ex.Message, "encoder bug") {
						t.Fatalf("seq %d (its reply panicked): %+v %+v", rep.seq, rep, rep.ex)
					}
				}
			}
			// The connection goes on serving.
			args := &echotest.EchoEchoArgs{Req: &echotest.Request{Action: "echo", Msg: "after"}}
			if err := c.send("echo", thrift.CALL, 9, args, nil); err != nil {
				t.Fatal(err)
			}
			res := new(echotest.EchoEchoResult)
			if rep, err := c.recv(res); err != nil || res.Success.GetMsg() != "after" {
				t.Fatalf("after the panic: %+v %v", rep, err)
			}
			if n := s.Stats().Panics; n != 2 {
				t.Errorf("Stats().Panics = %d, want 2", n)
			}
		})
	}
}
