//go:build linux || darwin || freebsd

package netpoll

import (
	"bytes"
	"io"
	"net"
	"testing"
)

// TestFailedWriteKeepsInputBeforeReset: a peer that reads the head of a
// large write, answers, and closes with the rest unread (so its kernel
// resets the connection) leaves its answer readable after the Flush fails,
// however the reset reaches the writer: the write's own system call
// failing included, when the poller had not read the answer yet. Before,
// that failure closed the connection with the answer still in the socket,
// lost.
func TestFailedWriteKeepsInputBeforeReset(t *testing.T) {
	const runs = 150
	answer := []byte("refused: too large")
	lost := 0
	big := make([]byte, 16<<20)
	for i := range runs {
		c, s := dialPair(t)
		go func() {
			head := make([]byte, 1024)
			if _, err := io.ReadFull(s, head); err != nil {
				return
			}
			s.Write(answer)
			s.(*net.TCPConn).SetLinger(0) // the reset, whatever the close finds unread
			s.Close()
		}()
		_, err := c.Write(big)
		if err == nil {
			t.Fatalf("run %d: a write of 16 MiB to a peer that reset the connection succeeded", i)
		}
		got := make([]byte, 0, len(answer))
		if c.Len() >= len(answer) {
			p, rerr := c.Next(len(answer))
			if rerr != nil {
				t.Fatalf("run %d: reading the %d bytes buffered after the failed write: %v", i, c.Len(), rerr)
			}
			got = append(got, p...)
		}
		if !bytes.Equal(got, answer) {
			lost++
			t.Logf("run %d: the write failed with %v, and the input holds %q, want %q", i, err, got, answer)
		}
		c.Close()
	}
	if lost > 0 {
		t.Errorf("%d of %d runs lost the answer that came before the reset", lost, runs)
	}
}
