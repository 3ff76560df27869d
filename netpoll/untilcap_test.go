//go:build linux

package netpoll_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/netpoll"
)

// Until on a peer that never sends the delimiter stops once the input cap is
// buffered, with an error that says so and the bytes left unread, instead of
// reading the peer's stream without bound.
func TestUntilBoundedByInputCap(t *testing.T) {
	const inputCap = 64 << 10
	res := make(chan error, 1)
	var left atomic.Int64
	_, addr := serve(t, netpoll.Config{
		InputCap: inputCap,
		OnRequest: func(_ context.Context, c netpoll.Connection) error {
			_, err := c.Reader().Until('\n')
			left.Store(int64(c.Reader().Len()))
			select {
			case res <- err:
			default:
			}
			return err
		},
	})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		c.Write(bytes.Repeat([]byte{'x'}, 4<<20)) // ends when c is closed
	}()
	defer func() { c.Close(); <-wrote }()
	timer := time.NewTimer(5 * time.Second)
	defer timer.Stop()
	select {
	case err = <-res:
	case <-timer.C:
		t.Fatal("Until still waiting 5 s after 4 MiB without a delimiter (input cap 64 KiB)")
	}
	if !errors.Is(err, buf.ErrDelimNotFound) || !strings.Contains(err.Error(), "input cap") {
		t.Fatalf("Until: %v; want buf.ErrDelimNotFound naming the input cap", err)
	}
	// The poller stops reading at the cap, but each read may pass it by up
	// to a read's size, and Until's wait lets one more read in: a loaded
	// machine has shown 2.4 times the cap.
	if l := left.Load(); l < inputCap || l > 4*inputCap {
		t.Fatalf("%d bytes buffered when Until gave up; want the cap (%d) to at most 4 times it, unread", l, inputCap)
	}
}

// Until finds a delimiter that arrives in a later read, after many reads
// without it, and returns the whole line.
func TestUntilAcrossReads(t *testing.T) {
	got := make(chan string, 1)
	_, addr := serve(t, netpoll.Config{
		OnRequest: func(_ context.Context, c netpoll.Connection) error {
			p, err := c.Reader().Until('\n')
			if err != nil {
				return err
			}
			got <- string(p)
			return nil
		},
	})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := strings.Repeat("abcdefgh", 64) + "\n"
	for i := 0; i < len(want); i += 8 {
		if _, err := c.Write([]byte(want[i:min(i+8, len(want))])); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Microsecond) // let the reads come one by one
	}
	timer := time.NewTimer(5 * time.Second)
	defer timer.Stop()
	select {
	case line := <-got:
		if line != want {
			t.Fatalf("Until returned %d bytes %q...; want the %d-byte line", len(line), line[:min(len(line), 16)], len(want))
		}
	case <-timer.C:
		t.Fatal("no line after 5 s")
	}
}
