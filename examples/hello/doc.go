// Package hello is Petrel's hello example: the service of hello.thrift, its
// generated code (gen/hello, committed; a test checks it is what petrel gen
// writes today), an implementation (handler), a server, a client and a demo
// that runs both in one process and measures them.
//
//	go run ./examples/hello/demo                        # calls, then a 5 s benchmark
//	go run ./examples/hello/server -addr 127.0.0.1:8888
//	go run ./examples/hello/client -addr 127.0.0.1:8888
//
// To regenerate gen/ after editing hello.thrift, from the repository root:
//
//	go run ./cmd/petrel gen -out examples/hello/gen -module github.com/petrel-rpc/petrel/examples/hello/gen examples/hello/hello.thrift
package hello
