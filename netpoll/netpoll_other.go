//go:build !(linux || darwin || freebsd)

package netpoll

import (
	"context"
	"net"
	"time"
)

// EventLoop is not available on this platform: every method reports
// ErrUnsupported.
type EventLoop struct{}

// NewEventLoop reports ErrUnsupported on this platform.
func NewEventLoop(cfg Config) (*EventLoop, error) { return nil, ErrUnsupported }

// Serve reports ErrUnsupported on this platform.
func (l *EventLoop) Serve(ln net.Listener) error { return ErrUnsupported }

// Shutdown reports ErrUnsupported on this platform.
func (l *EventLoop) Shutdown(ctx context.Context) error { return ErrUnsupported }

// Dialer is not available on this platform.
type Dialer struct{ Timeout time.Duration }

// DialContext reports ErrUnsupported on this platform.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (Connection, error) {
	return nil, ErrUnsupported
}

// DialConnection reports ErrUnsupported on this platform.
func DialConnection(network, address string, timeout time.Duration) (Connection, error) {
	return nil, ErrUnsupported
}

// SetNumPollers reports ErrUnsupported on this platform.
func SetNumPollers(n int) error { return ErrUnsupported }

// NumPollers returns 0 on this platform.
func NumPollers() int { return 0 }
