package main

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/petrel-rpc/petrel/bench/rpc/gen-apache/echo"
)

// Apache Thrift Go with TFramedTransport and TBinaryProtocol: the server is
// a TSimpleServer (a goroutine per connection); an Apache client is not
// safe for concurrent use, so each caller has its own connection.
func init() {
	register("apache", implementation{serve: serveApache, newClient: newApacheClient})
}

type apacheHandler struct{}

func (apacheHandler) Echo(ctx context.Context, req *echo.Request) (*echo.Response, error) {
	return &echo.Response{Action: req.Action, Msg: req.Msg}, nil
}

func serveApache(ln net.Listener) (func(context.Context) error, <-chan error, error) {
	// TServerSocket listens itself: hand it the address of ln.
	addr := ln.Addr()
	if err := ln.Close(); err != nil {
		return nil, nil, err
	}
	sock, err := thrift.NewTServerSocket(addr.String())
	if err != nil {
		return nil, nil, err
	}
	if err := sock.Listen(); err != nil {
		return nil, nil, err
	}
	conf := &thrift.TConfiguration{}
	s := thrift.NewTSimpleServer4(echo.NewEchoServiceProcessor(apacheHandler{}), sock,
		thrift.NewTFramedTransportFactoryConf(thrift.NewTTransportFactory(), conf),
		thrift.NewTBinaryProtocolFactoryConf(conf))
	done := serveInBackground(s.Serve)
	stop := func(ctx context.Context) error {
		stopped := make(chan error, 1)
		go func() { stopped <- s.Stop() }()
		select {
		case err := <-stopped:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return stop, done, nil
}

type apacheClient struct {
	addr string
	conf *thrift.TConfiguration

	mu    sync.Mutex          // guards trans
	trans []thrift.TTransport // guarded by mu: every connection opened, for Close
}

func newApacheClient(addr string, conc int) (echoClient, error) {
	return &apacheClient{addr: addr, conf: &thrift.TConfiguration{ConnectTimeout: 5 * time.Second}}, nil
}

// open dials one framed, binary-protocol connection.
func (a *apacheClient) open() (*echo.EchoServiceClient, thrift.TTransport, error) {
	sock := thrift.NewTSocketConf(a.addr, a.conf)
	trans := thrift.NewTFramedTransportConf(sock, a.conf)
	if err := trans.Open(); err != nil {
		return nil, nil, err
	}
	a.mu.Lock()
	a.trans = append(a.trans, trans)
	a.mu.Unlock()
	pf := thrift.NewTBinaryProtocolFactoryConf(a.conf)
	return echo.NewEchoServiceClientFactory(trans, pf), trans, nil
}

func (a *apacheClient) caller(i int, action, msg string) (echoFunc, error) {
	c, trans, err := a.open()
	if err != nil {
		return nil, err
	}
	req := &echo.Request{Action: action, Msg: msg}
	return func(ctx context.Context) (string, string, error) {
		if c == nil { // the last call failed: the connection is in an unknown state
			if c, trans, err = a.open(); err != nil {
				c = nil
				return "", "", err
			}
		}
		resp, err := c.Echo(ctx, req)
		if err != nil {
			_ = trans.Close()
			c = nil
			return "", "", err
		}
		return resp.Action, resp.Msg, nil
	}, nil
}

func (a *apacheClient) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	var errs []error
	for _, t := range a.trans {
		if t.IsOpen() {
			errs = append(errs, t.Close())
		}
	}
	a.trans = nil
	return errors.Join(errs...)
}
