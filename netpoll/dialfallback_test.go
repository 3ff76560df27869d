//go:build linux

package netpoll_test

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
)

// fakeDNS answers every A query for any name with the IPv4 addresses in
// order, and every other query with no answer, over the stream framing Go's
// resolver uses for a connection that is not a net.PacketConn.
func fakeDNS(ips ...[4]byte) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		client, server := net.Pipe()
		go func() {
			defer server.Close()
			for {
				var l [2]byte
				if _, err := io.ReadFull(server, l[:]); err != nil {
					return
				}
				q := make([]byte, binary.BigEndian.Uint16(l[:]))
				if _, err := io.ReadFull(server, q); err != nil {
					return
				}
				server.Write(dnsAnswer(q, ips))
			}
		}()
		return client, nil
	}}
}

// dnsAnswer builds the framed response to the query q (RFC 1035 4.1).
func dnsAnswer(q []byte, ips [][4]byte) []byte {
	end := 12
	for q[end] != 0 {
		end += int(q[end]) + 1
	}
	end += 5 // the root label, QTYPE and QCLASS
	qtype := binary.BigEndian.Uint16(q[end-4:])
	var answers [][4]byte
	if qtype == 1 { // A
		answers = ips
	}
	m := []byte{q[0], q[1], 0x81, 0x80, 0, 1, 0, byte(len(answers)), 0, 0, 0, 0}
	m = append(m, q[12:end]...)
	for _, ip := range answers {
		// The name as a pointer to the question's, type A, class IN, TTL 60.
		m = append(m, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4)
		m = append(m, ip[:]...)
	}
	return append(binary.BigEndian.AppendUint16(nil, uint16(len(m))), m...)
}

// TestDialTriesEveryAddress: a name that resolves to several addresses is
// dialed at each in turn until one accepts, as net.Dialer does, so an
// address that refuses (a dual-stack name whose server listens on one
// family only, a host of a round-robin name that is down) does not fail
// the dial.
func TestDialTriesEveryAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go closeAccepted(ln)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	saved := net.DefaultResolver
	defer func() { net.DefaultResolver = saved }()
	// Nothing listens on 127.0.0.2 at that port: it refuses.
	for _, order := range [][][4]byte{{{127, 0, 0, 2}, {127, 0, 0, 1}}, {{127, 0, 0, 1}, {127, 0, 0, 2}}} {
		net.DefaultResolver = fakeDNS(order...)
		addrs, err := net.DefaultResolver.LookupIPAddr(context.Background(), "twohosts.test.")
		if err != nil || len(addrs) != 2 {
			t.Fatalf("the fake DNS answers %v, %v", addrs, err)
		}
		c, err := netpoll.DialConnection("tcp", net.JoinHostPort("twohosts.test.", port), 5*time.Second)
		if err != nil {
			t.Fatalf("dial with addresses %v: %v", addrs, err)
		}
		c.Close()
	}
}

// closeAccepted accepts connections and closes them until ln is closed.
func closeAccepted(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		c.Close()
	}
}
