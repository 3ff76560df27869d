package netpoll

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/petrel-rpc/petrel/gopool"
)

// Config configures an EventLoop. Zero fields take their defaults.
type Config struct {
	// OnRequest runs in a pool goroutine when a connection has input, and again
	// while it consumes input and more remains. It reads with the connection's
	// Reader (which waits for missing bytes) and replies with its Writer and
	// Flush. Returning an error closes the connection. Required.
	OnRequest func(ctx context.Context, conn Connection) error
	// OnPrepare runs when a connection is accepted, before it is registered;
	// the context it returns is passed to the other callbacks. OnDisconnect
	// runs for every connection OnPrepare saw, also one that is then not
	// served (the loop shut down meanwhile). It runs on the goroutine that
	// accepted the connection (a poller's, or the one that watches the
	// listener for its Close): it must be quick and must not block, nor
	// call Shutdown, which waits for the OnPrepare calls in progress. A panic
	// is recovered and reported, and the connection is then not served; so
	// it is after runtime.Goexit (t.FailNow in a test, say), and the
	// accepting goroutine goes on in a new one. Optional.
	OnPrepare func(conn Connection) context.Context
	// OnConnect runs after a connection is registered, before its first
	// OnRequest and before its OnDisconnect, even if the connection stops
	// being active meanwhile; it may replace the context. Optional.
	OnConnect func(ctx context.Context, conn Connection) context.Context
	// OnDisconnect runs once, in a pool goroutine, when a connection stops
	// being active: the peer closed or reset it, or it was closed locally;
	// if OnConnect is running then, once it has returned, with the context
	// it returned. Optional.
	OnDisconnect func(ctx context.Context, conn Connection)

	// ReadTimeout bounds each blocking read of a handler; 0 (default) means
	// no limit.
	ReadTimeout time.Duration
	// WriteTimeout bounds each Flush that waits for the socket, from its
	// first wait to its end; 0 (default) means no limit.
	WriteTimeout time.Duration
	// IdleTimeout closes connections without input for this long; 0 (default)
	// means never.
	IdleTimeout time.Duration
	// InputCap is the input in bytes a connection buffers before its socket
	// stops being read until the handler consumes some (default 4 MiB). At
	// the peer's close, what the socket still holds (bounded by the
	// kernel's socket buffers) is read past it.
	InputCap int
	// Pool runs the handlers (default: a pool of its own with
	// gopool.DefaultConfig, closed at Shutdown).
	Pool *gopool.Pool
	// PanicHandler receives a panic of OnRequest, OnPrepare or OnConnect (the
	// connection is closed).
	// Default: none (the panic is dropped after closing the connection).
	PanicHandler func(recovered any, stack []byte)
}

// DefaultConfig returns a Config with every default filled in except
// OnRequest.
func DefaultConfig() Config {
	return Config{InputCap: defaultInputCap}
}

// Validate reports a Config that cannot work.
func (c *Config) Validate() error {
	if c.OnRequest == nil {
		return errors.New("netpoll: Config.OnRequest is required")
	}
	if c.InputCap < 0 || c.ReadTimeout < 0 || c.WriteTimeout < 0 || c.IdleTimeout < 0 {
		return fmt.Errorf("netpoll: negative limit in Config (InputCap %d, timeouts %v %v %v)",
			c.InputCap, c.ReadTimeout, c.WriteTimeout, c.IdleTimeout)
	}
	return nil
}
