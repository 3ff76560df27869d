//go:build linux || darwin || freebsd

package netpoll_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/petrel-rpc/petrel/netpoll"
)

// An echo server and a client over Petrel's netpoll: the handler reads with
// the nocopy Reader and replies with one Flush.
func Example() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	loop, err := netpoll.NewEventLoop(netpoll.Config{
		OnRequest: func(_ context.Context, c netpoll.Connection) error {
			r, w := c.Reader(), c.Writer()
			line, err := r.Until('\n') // waits for a whole line
			if err != nil {
				return err
			}
			w.WriteString("echo: ")
			w.WriteBinary(line)
			r.Release()
			return w.Flush()
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	go loop.Serve(ln)
	defer loop.Shutdown(context.Background())

	c, err := netpoll.DialConnection("tcp", ln.Addr().String(), time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	c.Writer().WriteString("hello\n")
	c.Writer().Flush()
	reply, _ := c.Reader().Until('\n')
	fmt.Printf("%s", reply)
	// Output: echo: hello
}
