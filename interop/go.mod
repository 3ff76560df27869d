module github.com/petrel-rpc/petrel/interop

go 1.26.0

replace github.com/petrel-rpc/petrel => ../

require (
	github.com/apache/thrift v0.17.0
	github.com/petrel-rpc/petrel v0.0.0-00010101000000-000000000000
	go.uber.org/goleak v1.3.0
)

require golang.org/x/sys v0.49.0 // indirect
