// Command server serves the hello example's service Hello.
//
//	go run ./examples/hello/server [-addr 127.0.0.1:8888]
//
// It stops gracefully on SIGINT or SIGTERM: calls in progress are answered
// (for up to 5 s), then it exits with status 0, or 1 if Stop failed.
package main

import (
	"context"
	"errors"
	"flag"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/petrel-rpc/petrel/examples/hello/gen/hello"
	"github.com/petrel-rpc/petrel/examples/hello/handler"
	"github.com/petrel-rpc/petrel/server"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8888", "address to listen on (host:port; port 0 picks a free one)")
	flag.Parse()
	// Listen before saying anything: a port in use fails here, and the log
	// shows the port chosen for port 0.
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	s := hello.NewHelloServer(new(handler.Handler), server.WithListener(ln))
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	stopped := make(chan error, 1)
	go func() {
		<-sig
		log.Print("stopping: finishing the calls in progress")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		stopped <- s.Stop(ctx)
	}()
	log.Printf("serving Hello on %s", ln.Addr())
	// Run returns once Stop has stopped accepting (ErrServerStopped if the
	// signal came before it started); Stop may still be closing
	// connections, so wait for it before exiting.
	if err := s.Run(); err != nil && !errors.Is(err, server.ErrServerStopped) {
		log.Fatal(err)
	}
	if err := <-stopped; err != nil {
		log.Fatalf("stop: %v", err)
	}
	log.Print("stopped")
}
