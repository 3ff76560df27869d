package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/transport"
)

// TestOversizedRequestAnswerBeatsReset: a request far over a Petrel
// server's WithMaxMessageSize (4 MiB against 64 KiB) is answered with a
// PROTOCOL_ERROR exception naming the limit, after which the server closes
// with the rest of the request unread, so the kernel resets the connection
// while the client still writes. The exception, which came first, is the
// call's error whenever it had reached the client when its write failed,
// on every pool, over TTHeader and Framed (a Buffered request declares no
// size: the server closes unanswered). Before, the short and long pools failed
// with "writing the request ... connection reset by peer" whenever the
// reset came while the request was still being written.
func TestOversizedRequestAnswerBeatsReset(t *testing.T) {
	const limit = 64 << 10
	const runs = 20
	_, addr := startPetrel(t, server.WithMaxMessageSize(limit))
	msg := []byte(strings.Repeat("z", 4<<20))
	total, answered := 0, 0
	var resets []string
	for _, s := range setups() {
		if s.proto == transport.Buffered {
			continue // declares no size: the server closes unanswered
		}
		t.Run(s.name, func(t *testing.T) {
			c := newClient(t, addr, s, client.WithRPCTimeout(10*time.Second))
			got := 0
			for range runs {
				_, err := echo(context.Background(), c, &echoArgs{Msg: msg})
				var ae *thrift.ApplicationException
				switch {
				case errors.As(err, &ae) && ae.Type == thrift.ExceptionProtocolError &&
					strings.Contains(ae.Message, "exceeds the limit of 65536") && strings.Contains(err.Error(), ae.Message):
					got++
				case err != nil && (strings.Contains(err.Error(), "reset by peer") || strings.Contains(err.Error(), "closed by peer")):
					// The kernel's reset can beat the exception to the
					// client: then it is all the client knows.
					resets = append(resets, s.name+": "+err.Error())
				default:
					t.Fatalf("the call of %d bytes over a limit of %d returned %v; want the server's exception (or, had it not come yet, the reset)", len(msg), limit, err)
				}
			}
			t.Logf("%d of %d calls got the server's exception, %d the reset", got, runs, runs-got)
			total += runs
			answered += got
		})
	}
	// The race is the kernel's and the scheduler's: the exception must win
	// most of the time, not always (it did 2 to 20 times in 20 before, by
	// setup; after, 10 to 20 under -race on a loaded machine).
	if answered < total*3/4 {
		t.Errorf("only %d of %d calls got the server's exception; the others: %q", answered, total, resets[:min(len(resets), 5)])
	}
}

// TestMuxOversizedAnswerBeatsWriteError: on the multiplexed pool, a
// request far over a Petrel server's limit gets the server's exception,
// not the error of its failed write, whenever the exception came first:
// the write's failure used to shut the connection down at once, failing
// the call with the write's error while its reader was about to deliver
// the exception (the write's error won 4 to 16 of 50 runs, none of 500
// after).
func TestMuxOversizedAnswerBeatsWriteError(t *testing.T) {
	const limit = 64 << 10
	const runs = 50
	_, addr := startPetrel(t, server.WithMaxMessageSize(limit))
	msg := []byte(strings.Repeat("z", 4<<20))
	c := newClient(t, addr, setup{"mux/ttheader", transport.TTHeader, client.WithMuxConnection(1)}, client.WithRPCTimeout(10*time.Second))
	var others []string
	for range runs {
		_, err := echo(context.Background(), c, &echoArgs{Msg: msg})
		var ae *thrift.ApplicationException
		if errors.As(err, &ae) && ae.Type == thrift.ExceptionProtocolError && strings.Contains(err.Error(), "exceeds the limit of 65536") {
			continue
		}
		if err == nil {
			t.Fatalf("the call of %d bytes over a limit of %d succeeded", len(msg), limit)
		}
		others = append(others, err.Error())
	}
	t.Logf("%d of %d calls got the server's exception", runs-len(others), runs)
	// The kernel may still deliver the reset first, rarely (not seen in
	// 500 runs after the change, with -race or not).
	if len(others) > runs/25 {
		t.Errorf("%d of %d calls did not get the server's exception; first: %q", len(others), runs, others[:min(len(others), 3)])
	}
}
