// Command client calls the hello example's service Hello: Echo, Greet (once
// with a valid name, once with the empty name, which the server answers
// with the declared exception InvalidName) and the oneway Notify.
//
//	go run ./examples/hello/client [-addr 127.0.0.1:8888]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/examples/hello/gen/hello"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8888", "server address (host:port)")
	flag.Parse()
	if err := run(*addr); err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
		os.Exit(1)
	}
}

func run(addr string) error {
	c, err := hello.NewHelloClient("hello", client.WithHostPorts(addr))
	if err != nil {
		return err
	}
	defer c.Close()
	ctx := context.Background()

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

	_, err = c.Greet(ctx, "")
	var invalid *hello.InvalidName
	if !errors.As(err, &invalid) {
		return fmt.Errorf("Greet(\"\"): got %v, want the declared exception InvalidName", err)
	}
	fmt.Printf("Greet(%q) failed with the declared exception InvalidName: reason %q\n", "", invalid.Reason)

	if err := c.Notify(ctx, "client says hi"); err != nil {
		return fmt.Errorf("Notify: %w", err)
	}
	fmt.Println("Notify (oneway) sent")
	return nil
}
