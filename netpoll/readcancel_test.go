//go:build linux || darwin || freebsd

package netpoll

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/buf"
)

// readerCalls are the Reader methods that may wait for input, each asking
// for more than the test ever sends before it checks the result.
var readerCalls = []struct {
	name string
	read func(c *connection) error
}{
	{"Next", func(c *connection) error { _, err := c.Next(4); return err }},
	{"Peek", func(c *connection) error { _, err := c.Peek(4); return err }},
	{"Skip", func(c *connection) error { return c.Skip(4) }},
	{"Until", func(c *connection) error { _, err := c.Until('\n'); return err }},
	{"ReadByte", func(c *connection) error { _, err := c.ReadByte(); return err }},
	{"ReadString", func(c *connection) error { _, err := c.ReadString(4); return err }},
	{"ReadBinary", func(c *connection) error { _, err := c.ReadBinary(4); return err }},
	{"Slice", func(c *connection) error { _, err := c.Slice(4); return err }},
	{"Read", func(c *connection) error { _, err := c.Read(make([]byte, 4)); return err }},
}

// waitForReader polls until a read of c waits for input.
func waitForReader(t *testing.T, c *connection, what string) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); c.waitN.Load() == 0; {
		if time.Now().After(end) {
			t.Fatalf("%s: no read waited within 5 s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// readEnds waits up to limit for a read's result.
func readEnds(t *testing.T, res <-chan error, limit time.Duration, what string) error {
	t.Helper()
	tm := time.NewTimer(limit)
	defer tm.Stop()
	select {
	case err := <-res:
		return err
	case <-tm.C:
		t.Fatalf("%s: the read still waits %v after its cancel channel closed", what, limit)
		return nil
	}
}

// TestReadCancelEndsWaitingRead: a read waiting for input ends with
// ErrReadCanceled once the channel given to SetReadCancel closes, whichever
// Reader method waits, with a read timeout armed or not. The connection
// stays open: the input that arrives later is read once the channel is
// cleared.
func TestReadCancelEndsWaitingRead(t *testing.T) {
	for _, timeout := range []time.Duration{0, time.Hour} {
		for _, rc := range readerCalls {
			what := rc.name
			if timeout > 0 {
				what += " with a read timeout"
			}
			c, s := dialPair(t)
			if err := c.SetReadTimeout(timeout); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			c.SetReadCancel(done)
			res := make(chan error, 1)
			go func() { res <- rc.read(c) }()
			waitForReader(t, c, what)
			start := time.Now()
			close(done)
			err := readEnds(t, res, 2*time.Second, what)
			if !errors.Is(err, ErrReadCanceled) {
				t.Fatalf("%s: the canceled read returned %v, want ErrReadCanceled", what, err)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("%s: the read ended %v after the cancel", what, d)
			}
			if !c.IsActive() {
				t.Fatalf("%s: the connection closed after a canceled read", what)
			}
			c.SetReadCancel(nil)
			if _, err := s.Write([]byte("abc\n")); err != nil {
				t.Fatal(err)
			}
			if got, err := c.Next(4); err != nil || string(got) != "abc\n" {
				t.Fatalf("%s: the read after the cancel got %q, %v; want \"abc\\n\"", what, got, err)
			}
			c.Close()
			if timeout > 0 && c.rtimer.Load() != nil && c.rtimer.Load().Stop() {
				t.Errorf("%s: the read deadline timer is still armed after Close", what)
			}
		}
	}
}

// TestReadCancelClosedBefore: with a closed channel, a read that input
// already satisfies succeeds, and one that would wait fails at once, keeping
// the part of its input that came.
func TestReadCancelClosedBefore(t *testing.T) {
	c, s := dialPair(t)
	done := make(chan struct{})
	close(done)
	c.SetReadCancel(done)
	if _, err := s.Write([]byte("ab")); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(5 * time.Second); c.Len() < 2; {
		if time.Now().After(end) {
			t.Fatal("the input did not arrive within 5 s")
		}
		time.Sleep(time.Millisecond)
	}
	if got, err := c.Peek(2); err != nil || string(got) != "ab" {
		t.Fatalf("Peek(2) of buffered input: %q, %v", got, err)
	}
	res := make(chan error, 1)
	go func() {
		_, err := c.Next(3)
		res <- err
	}()
	if err := readEnds(t, res, 2*time.Second, "Next(3)"); !errors.Is(err, ErrReadCanceled) {
		t.Fatalf("Next(3) with 2 bytes buffered returned %v, want ErrReadCanceled", err)
	}
	if got, err := c.Next(2); err != nil || string(got) != "ab" {
		t.Fatalf("Next(2) after the canceled read: %q, %v; want the buffered \"ab\"", got, err)
	}
	// Until scans what came and waits for the rest.
	if _, err := s.Write([]byte("cd")); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(5 * time.Second); c.Len() < 2; {
		if time.Now().After(end) {
			t.Fatal("the input did not arrive within 5 s")
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := c.Until('\n'); !errors.Is(err, ErrReadCanceled) {
		t.Fatalf("Until with no delimiter buffered returned %v, want ErrReadCanceled", err)
	}
	if c.Len() != 2 {
		t.Fatalf("Until's canceled read left %d bytes buffered, want 2", c.Len())
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// A closed connection says so, canceled or not.
	if _, err := c.Next(1); !errors.Is(err, ErrConnClosed) {
		t.Fatalf("Next on a closed connection returned %v, want ErrConnClosed", err)
	}
}

// TestReadCancelNilWaits: a nil channel (and a cleared one) leaves reads
// waiting for their input as before.
func TestReadCancelNilWaits(t *testing.T) {
	c, s := dialPair(t)
	done := make(chan struct{})
	c.SetReadCancel(done)
	c.SetReadCancel(nil)
	close(done)
	res := make(chan []byte, 1)
	errc := make(chan error, 1)
	go func() {
		p, err := c.Next(3)
		if err != nil {
			errc <- err
			return
		}
		res <- append([]byte(nil), p...)
	}()
	waitForReader(t, c, "Next(3)")
	quiet := time.NewTimer(50 * time.Millisecond)
	select {
	case err := <-errc:
		t.Fatalf("a read with its cancel channel cleared ended with %v", err)
	case <-res:
		t.Fatal("a read returned before its input came")
	case <-quiet.C:
	}
	if _, err := s.Write([]byte("xyz")); err != nil {
		t.Fatal(err)
	}
	tm := time.NewTimer(5 * time.Second)
	defer tm.Stop()
	select {
	case p := <-res:
		if string(p) != "xyz" {
			t.Fatalf("read %q, want \"xyz\"", p)
		}
	case err := <-errc:
		t.Fatal(err)
	case <-tm.C:
		t.Fatal("the read did not get its input within 5 s")
	}
}

// TestReadCancelPublic: the Connection interface offers SetReadCancel, and
// its error says what happened.
func TestReadCancelPublic(t *testing.T) {
	var c Connection
	c, _ = dialPair(t)
	done := make(chan struct{})
	c.SetReadCancel(done)
	close(done)
	var r buf.Reader = c.Reader()
	if _, err := r.Next(1); !errors.Is(err, ErrReadCanceled) {
		t.Fatalf("Next(1) with a closed cancel channel returned %v, want ErrReadCanceled", err)
	}
	if msg := ErrReadCanceled.Error(); !strings.Contains(msg, "read canceled") {
		t.Fatalf("ErrReadCanceled says %q, which does not say the read was canceled", msg)
	}
}
