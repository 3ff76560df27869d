package main

import (
	"context"

	"github.com/petrel-rpc/petrel/netpoll"
)

// The petrel server is Petrel's own netpoll package used the way its
// documentation shows: an EventLoop whose OnRequest handler takes whole
// messages with the nocopy Reader.Next while at least one is buffered,
// copies each into space from Writer.Malloc, then releases the read buffer
// and flushes once (the same handler as the netpoll server, for a like for
// like comparison).
func init() {
	register("petrel", newPetrelServer)
}

func newPetrelServer(size int) (echoServer, error) {
	loop, err := netpoll.NewEventLoop(netpoll.Config{
		OnRequest: func(_ context.Context, c netpoll.Connection) error {
			r, w := c.Reader(), c.Writer()
			for r.Len() >= size {
				in, err := r.Next(size) // a nocopy view, valid until Release
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
		},
	})
	if err != nil {
		return nil, err
	}
	return loop, nil
}
