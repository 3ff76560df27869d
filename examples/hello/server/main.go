// Command server serves the hello example's service Hello.
//
//	go run ./examples/hello/server [-addr 127.0.0.1:8888]
//
// It stops gracefully on SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/petrel-rpc/petrel/examples/hello/gen/hello"
	"github.com/petrel-rpc/petrel/examples/hello/handler"
	"github.com/petrel-rpc/petrel/server"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8888", "address to listen on (host:port)")
	flag.Parse()
	s := hello.NewHelloServer(new(handler.Handler), server.WithListenAddress(*addr))
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		log.Print("stopping: finishing the calls in progress")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			log.Printf("stop: %v", err)
		}
	}()
	log.Printf("serving Hello on %s", *addr)
	if err := s.Run(); err != nil {
		log.Fatal(err)
	}
}
