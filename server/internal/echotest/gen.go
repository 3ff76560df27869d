// Package echotest is the Echo service the server's tests and benchmarks
// use, generated from echo.thrift by petrel gen (echo.go; do not edit it,
// regenerate it).
package echotest

//go:generate go run ../../../cmd/petrel gen -out .. -module github.com/petrel-rpc/petrel/server/internal echo.thrift
