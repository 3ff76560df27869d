module github.com/petrel-rpc/petrel/bench

go 1.26.0

replace github.com/petrel-rpc/petrel => ../

require (
	github.com/bytedance/gopkg v0.1.1 // indirect
	github.com/cloudwego/gopkg v0.1.4 // indirect
	github.com/cloudwego/netpoll v0.7.2 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
