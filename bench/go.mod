module github.com/petrel-rpc/petrel/bench

go 1.26.0

// Petrel itself comes from this checkout. It is required ahead of use so that
// cmd/netbench/server_petrel.go (Petrel's netpoll) can be dropped in as is.
replace github.com/petrel-rpc/petrel => ../

require (
	github.com/apache/thrift v0.17.0
	github.com/cloudwego/netpoll v0.7.2
	github.com/petrel-rpc/petrel v0.0.0-00010101000000-000000000000
	golang.org/x/sys v0.49.0
	google.golang.org/grpc v1.85.0
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/bytedance/gopkg v0.1.1 // indirect
	github.com/cloudwego/gopkg v0.1.4 // indirect
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1 // indirect
)
