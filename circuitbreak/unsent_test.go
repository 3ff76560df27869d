package circuitbreak_test

import (
	"errors"
	"testing"

	"github.com/petrel-rpc/petrel/circuitbreak"
	"github.com/petrel-rpc/petrel/rpcerr"
)

// unsentErr marks an error as one whose request never left the client,
// as Petrel's client does (retry.NotSent).
type unsentErr struct{ error }

func (unsentErr) RequestNotSent() bool { return true }
func (e unsentErr) Unwrap() error      { return e.error }

// TestUnsentEncodingErrorsAreNeutral: a request the client could not
// encode (a required field missing, say: rpcerr.Protocol, never sent) is
// the caller's own doing, not the service's: it neither opens the breaker
// nor dilutes its error rate. A Protocol error of a sent request (a reply
// that could not be decoded) still counts.
func TestUnsentEncodingErrorsAreNeutral(t *testing.T) {
	encoding := unsentErr{rpcerr.Wrap(rpcerr.Protocol, errors.New("required field name is not set"), "encoding the request of Echo")}
	if circuitbreak.DefaultCounts(encoding) {
		t.Fatalf("DefaultCounts(%v) is true: a request never sent counted as the service's failure", encoding)
	}
	clk := newClock()
	b := newBreaker(t, circuitbreak.Config{Now: clk.Now, MinSamples: 10})
	call := func(res error) {
		tk, err := b.Admit()
		if err != nil {
			t.Fatalf("call rejected: %v", err)
		}
		b.Finish(tk, res)
	}
	for range 30 {
		call(encoding)
	}
	if st := b.State(); st != circuitbreak.Closed {
		t.Fatalf("state %v after 30 requests the client could not encode, want closed", st)
	}
	for range 10 {
		call(errConn)
	}
	if st := b.State(); st != circuitbreak.Open {
		t.Fatalf("state %v after 10 failures of 10 sent calls (and 30 unsent encoding errors), want open", st)
	}

	badReply := rpcerr.Wrap(rpcerr.Protocol, errors.New("bad field type"), "decoding the reply of Echo")
	b2 := newBreaker(t, circuitbreak.Config{Now: clk.Now, MinSamples: 10})
	for range 10 {
		tk, _ := b2.Admit()
		b2.Finish(tk, badReply)
	}
	if st := b2.State(); st != circuitbreak.Open {
		t.Fatalf("state %v after 10 undecodable replies, want open", st)
	}
}
