package main

import (
	"context"
	"net"

	"github.com/petrel-rpc/petrel/bench/rpc/gen-petrel/echo"
	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/transport"
)

// Petrel, both ways a user would call it: "petrel" pools long connections
// (one call at a time on each) over Framed; "petrel-mux" shares the
// multiplexed pool's connections (DefaultMuxConnections of them) among all
// callers over TTHeader. The server is the same: it detects the protocol.
func init() {
	register("petrel", implementation{serve: servePetrel, newClient: func(addr string, conc int) (echoClient, error) {
		// The long pool keeps up to MaxIdlePerAddress idle connections; a
		// user with conc concurrent callers sizes it to conc, or the
		// connections beyond the default 32 would be dialled and closed
		// over and over.
		return newPetrelClient(addr,
			client.WithTransport(transport.Framed),
			client.WithLongConnection(client.LongPoolConfig{MaxIdlePerAddress: conc}))
	}})
	register("petrel-mux", implementation{serve: servePetrel, newClient: func(addr string, conc int) (echoClient, error) {
		return newPetrelClient(addr,
			client.WithTransport(transport.TTHeader),
			client.WithMuxConnection(0))
	}})
}

type petrelHandler struct{}

func (petrelHandler) Echo(ctx context.Context, req *echo.Request) (*echo.Response, error) {
	return &echo.Response{Action: req.Action, Msg: req.Msg}, nil
}

func servePetrel(ln net.Listener) (func(context.Context) error, <-chan error, error) {
	s := echo.NewEchoServiceServer(petrelHandler{}, server.WithListener(ln))
	return s.Stop, serveInBackground(s.Run), nil
}

type petrelClient struct {
	c echo.EchoServiceClient // safe for concurrent use: one for all callers
}

func newPetrelClient(addr string, opts ...client.Option) (echoClient, error) {
	c, err := echo.NewEchoServiceClient("echo", append([]client.Option{client.WithHostPorts(addr)}, opts...)...)
	if err != nil {
		return nil, err
	}
	return &petrelClient{c: c}, nil
}

func (p *petrelClient) caller(i int, action, msg string) (echoFunc, error) {
	req := &echo.Request{Action: action, Msg: msg}
	return func(ctx context.Context) (string, string, error) {
		resp, err := p.c.Echo(ctx, req)
		if err != nil {
			return "", "", err
		}
		return resp.Action, resp.Msg, nil
	}, nil
}

func (p *petrelClient) Close() error { return p.c.Close() }
