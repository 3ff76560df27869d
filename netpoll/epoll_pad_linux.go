//go:build linux && !(amd64 || 386)

package netpoll

// On other architectures struct epoll_event aligns data to 8 bytes.
type epollEventPad struct{ _ uint32 }
