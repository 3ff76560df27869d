package main

import (
	"context"

	"github.com/cloudwego/netpoll"
)

// The netpoll server is github.com/cloudwego/netpoll v0.7.2 used as its
// documentation shows: an EventLoop whose OnRequest handler takes whole
// messages with the nocopy Reader.Next while at least one is buffered,
// copies each into space from Writer.Malloc, then releases the read buffer
// and flushes once.
func init() {
	register("netpoll", newNetpollServer)
}

func newNetpollServer(size int) (echoServer, error) {
	onRequest := func(_ context.Context, c netpoll.Connection) error {
		r, w := c.Reader(), c.Writer()
		for r.Len() >= size {
			in, err := r.Next(size)
			if err != nil {
				return err
			}
			out, err := w.Malloc(size)
			if err != nil {
				return err
			}
			copy(out, in)
		}
		if err := r.Release(); err != nil {
			return err
		}
		return w.Flush()
	}
	return netpoll.NewEventLoop(onRequest)
}
