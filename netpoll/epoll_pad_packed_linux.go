//go:build linux && (amd64 || 386)

package netpoll

// On amd64 and 386 the kernel's struct epoll_event is packed: data follows
// events directly.
type epollEventPad struct{}
