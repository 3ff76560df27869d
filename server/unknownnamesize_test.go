package server_test

import (
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/transport"
)

// TestUnknownMethodReplyNotAmplified: a request for an unknown method
// whose 4 MiB name is made of control bytes is answered with an
// UNKNOWN_METHOD exception not much larger than the request. The exception
// quoted the whole name (4 bytes a byte): a reply of some 20 MiB, over the
// 16 MiB that the server and a Petrel client accept, so the caller could
// not read why it failed.
func TestUnknownMethodReplyNotAmplified(t *testing.T) {
	_, _, addr := startServer(t)
	name := strings.Repeat("\x01", 4<<20)
	// Framed: length, strict binary header with the name, seq, empty args.
	msg := binary.BigEndian.AppendUint32(nil, 0x80010001)
	msg = binary.BigEndian.AppendUint32(msg, uint32(len(name)))
	msg = append(msg, name...)
	msg = binary.BigEndian.AppendUint32(msg, 7)
	msg = append(msg, 0) // STOP
	req := binary.BigEndian.AppendUint32(nil, uint32(len(msg)))
	req = append(req, msg...)

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	go c.Write(req)
	var hdr [4]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		t.Fatal(err)
	}
	n := binary.BigEndian.Uint32(hdr[:]) + 4
	t.Logf("request frame %d bytes, reply frame %d bytes (%.1fx)", len(req), n, float64(n)/float64(len(req)))
	if n > server.DefaultMaxMessageSize || n > uint32(2*len(req)) {
		t.Fatalf("an UNKNOWN_METHOD reply of %d bytes to a request of %d: over the %d bytes the server accepts (a Petrel client reading it fails with a frame-too-large error: %v)",
			n, len(req), server.DefaultMaxMessageSize, readReplyErr(t, n))
	}
}

// readReplyErr is what transport.ReadFrame says of a frame of n bytes with
// the default limit.
func readReplyErr(t *testing.T, n uint32) error {
	b := binary.BigEndian.AppendUint32(nil, n-4)
	b = append(b, 0x80, 0x01, 0, 3)
	_, err := transport.ReadFrame(buf.NewLinkBufferFrom(b), transport.Framed, 0, nil)
	return err
}
