package client_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/rpcerr"
)

func ExampleClient_Call() {
	srv, err := newTestServer() // a Thrift server answering "echo"
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	c, err := client.New("Echo",
		client.WithHostPorts(srv.Addr()),
		client.WithRPCTimeout(time.Second),
		client.WithMuxConnection(2),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	// Generated stubs make these calls; the structs are the method's
	// <Service><Method>Args and Result.
	res := new(echoResult)
	err = c.Call(context.Background(), "echo", false, &echoArgs{Msg: []byte("hello")}, res)
	fmt.Println(string(res.Success), err)

	// A call that outlives its timeout.
	err = c.Call(context.Background(), "echo", false, &echoArgs{SleepMs: 200}, res,
		client.WithCallTimeout(20*time.Millisecond))
	var ne interface{ Timeout() bool }
	fmt.Println(rpcerr.CodeOf(err), errors.As(err, &ne) && ne.Timeout())
	// Output:
	// hello <nil>
	// timeout true
}
