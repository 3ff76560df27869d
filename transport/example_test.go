package transport_test

import (
	"fmt"

	"github.com/petrel-rpc/petrel/buf"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/transport"
)

// A client writes a TTHeader request with Kitex's header keys; the server
// detects the protocol from the first bytes, reads the message and its
// header, and decodes the body.
func Example() {
	conn := buf.NewLinkBuffer() // stands for a connection's buffers
	defer conn.Reset()

	// Client side.
	h := &transport.Header{}
	h.SetInt(transport.KeyFromService, "shop.frontend")
	h.SetInt(transport.KeyToService, "shop.echo")
	h.SetInt(transport.KeyToMethod, "Echo")
	h.SetInt(transport.KeyRPCTimeout, "500")
	req := &echo{Text: "hi", Nums: []int32{4, 2}}
	if err := transport.WriteMessage(conn, transport.TTHeader, h, "Echo", thrift.CALL, 1, req); err != nil {
		fmt.Println(err)
		return
	}
	conn.Flush()

	// Server side.
	p, err := transport.DetectReader(conn)
	if err != nil {
		fmt.Println(err)
		return
	}
	var in transport.Header
	name, typ, seq, body, err := transport.ReadMessage(conn, p, 0, &in)
	if err != nil {
		fmt.Println(err)
		return
	}
	var got echo
	if _, err := got.FastRead(body); err != nil {
		fmt.Println(err)
		return
	}
	conn.Release()
	fmt.Println(p, name, typ, seq)
	fmt.Println("caller:", in.IntInfo[transport.KeyFromService], "timeout ms:", in.IntInfo[transport.KeyRPCTimeout])
	fmt.Println("body:", got.Text, got.Nums)
	// Output:
	// ttheader Echo CALL 1
	// caller: shop.frontend timeout ms: 500
	// body: hi [4 2]
}

// Framing a payload by hand: BeginFrame reserves the whole frame and writes
// the length; the caller fills the payload room.
func ExampleBeginFrame() {
	w := buf.NewLinkBuffer()
	defer w.Reset()
	room, err := transport.BeginFrame(w, transport.Framed, nil, 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	copy(room, "abc")
	w.Flush()
	fmt.Printf("% x\n", w.Bytes())
	// Output:
	// 00 00 00 03 61 62 63
}

func ExampleDetect() {
	for _, first := range [][]byte{
		{0x80, 0x01, 0x00, 0x01},             // strict binary message header
		{0x00, 0x00, 0x00, 0x20, 0x80, 0x01}, // length, then a message
		{0x00, 0x00, 0x00, 0x20, 0x10, 0x00}, // length, then TTHeader magic
		{0x00, 0x00, 0x00},                   // too short
	} {
		p, err := transport.Detect(first)
		fmt.Println(p, err)
	}
	// Output:
	// buffered <nil>
	// framed <nil>
	// ttheader <nil>
	// Protocol(0) transport: need more bytes
}
