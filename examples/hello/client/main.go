// Command client calls the hello example's service Hello: Echo, Greet (once
// with a valid name, once with the empty name, which the server answers
// with the declared exception InvalidName) and the oneway Notify.
//
//	go run ./examples/hello/client [-addr 127.0.0.1:8888]
//
// Each call is bounded by the client's WithRPCTimeout and all of them
// together by the context's deadline; a failed call is reported with its
// rpcerr code (timeout, connection, declared, ...).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/examples/hello/gen/hello"
	"github.com/petrel-rpc/petrel/rpcerr"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8888", "server address (host:port)")
	flag.Parse()
	if err := run(*addr); err != nil {
		// rpcerr.CodeOf classifies any error a call returns.
		fmt.Fprintf(os.Stderr, "client: %v (rpcerr code %s)\n", err, rpcerr.CodeOf(err))
		os.Exit(1)
	}
}

func run(addr string) error {
	// Every call gives up after 500 ms (the default is 1 s)...
	c, err := hello.NewHelloClient("hello", client.WithHostPorts(addr), client.WithRPCTimeout(500*time.Millisecond))
	if err != nil {
		return err
	}
	defer c.Close()
	// ... and all of them together after 3 s: the earlier deadline wins.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()

	resp, err := c.Echo(ctx, &hello.EchoRequest{Action: "say", Msg: "hello, petrel"})
	if err != nil {
		return fmt.Errorf("Echo: %w", err)
	}
	fmt.Printf("Echo(action=say, msg=%q) = action=%s msg=%q\n", "hello, petrel", resp.Action, resp.Msg)

	greeting, err := c.Greet(ctx, "world")
	if err != nil {
		return fmt.Errorf("Greet: %w", err)
	}
	fmt.Printf("Greet(%q) = %q\n", "world", greeting)

	// A declared exception comes back as its generated type (rpcerr code
	// declared); any other error means the call itself failed.
	_, err = c.Greet(ctx, "")
	var invalid *hello.InvalidName
	if !errors.As(err, &invalid) {
		if err == nil {
			return errors.New(`Greet(""): no error, want the declared exception InvalidName`)
		}
		return fmt.Errorf(`Greet(""): %w`, err)
	}
	fmt.Printf("Greet(%q) failed with the declared exception InvalidName: reason %q\n", "", invalid.Reason)

	if err := c.Notify(ctx, "client says hi"); err != nil {
		return fmt.Errorf("Notify: %w", err)
	}
	fmt.Println("Notify (oneway) sent")
	return nil
}
