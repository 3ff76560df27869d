package server

import (
	"errors"
	"net"
	"time"

	"github.com/petrel-rpc/petrel/endpoint"
	"github.com/petrel-rpc/petrel/stats"
)

// Option configures a Server. Options are made by the With functions of this
// package; the configuration they change is private, so that new settings can
// be added without breaking callers.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// Defaults of the options.
const (
	// DefaultListenAddress is where Run listens without WithListenAddress
	// (the port Kitex servers use by default).
	DefaultListenAddress = ":8888"
	// DefaultMaxMessageSize is the largest frame accepted without
	// WithMaxMessageSize: 16 MiB.
	DefaultMaxMessageSize = 16 << 20
	// DefaultReadTimeout bounds the time to read the rest of a request
	// without WithReadTimeout.
	DefaultReadTimeout = 5 * time.Second
	// DefaultWriteTimeout bounds the wait for a client to take a batch of
	// replies without WithWriteTimeout.
	DefaultWriteTimeout = 5 * time.Second
	// DefaultExitWaitTime bounds how long Stop keeps a draining server
	// answering before it closes the connections.
	DefaultExitWaitTime = 5 * time.Second
)

type config struct {
	addr         string
	ln           net.Listener
	mws          []endpoint.Middleware
	maxConns     int
	maxQPS       int
	maxInFlight  int          // option_limit.go
	tracer       stats.Tracer // option_tracer.go; nil: none
	readTimeout  time.Duration
	writeTimeout time.Duration
	idleTimeout  time.Duration
	maxMsgSize   int
	exitWait     time.Duration
	quiet        time.Duration
	reg          regConfig // option_registry.go
}

func defaultConfig() config {
	return config{
		addr:         DefaultListenAddress,
		maxMsgSize:   DefaultMaxMessageSize,
		readTimeout:  DefaultReadTimeout,
		writeTimeout: DefaultWriteTimeout,
		exitWait:     DefaultExitWaitTime,
		quiet:        50 * time.Millisecond,
	}
}

// WithListenAddress sets the TCP address Run listens on ("host:port").
// Default [DefaultListenAddress] (":8888").
func WithListenAddress(addr string) Option {
	return optionFunc(func(c *config) { c.addr = addr })
}

// WithListener makes Run serve ln (a TCP or Unix listener from the net
// package) instead of listening itself. Default: none.
func WithListener(ln net.Listener) Option {
	return optionFunc(func(c *config) { c.ln = ln })
}

// WithMiddleware appends middleware around every handler call; the first
// given runs outermost. The request and response a middleware sees are the
// method's generated argument and result structs (thrift.FastCodec values;
// the response is nil for oneway methods). The server pools them: once the
// reply is written they are cleared and reused for later calls, so a
// middleware must not use req or resp after its endpoint returns (nor hand
// them to a goroutine that outlives the call): copy what you keep. The
// values they point to (the request args.Req, the handler's response)
// stay valid: clearing drops the structs' references. Default: none.
func WithMiddleware(mw ...endpoint.Middleware) Option {
	return optionFunc(func(c *config) { c.mws = append(c.mws, mw...) })
}

// WithMaxConnections bounds the open connections: a connection accepted
// beyond n is closed at once, unanswered (its client's calls fail with an
// rpcerr.Connection error, not Overloaded), and counted in
// Stats().RejectedConnections.
// Default 0: no limit.
func WithMaxConnections(n int) Option {
	return optionFunc(func(c *config) { c.maxConns = n })
}

// WithMaxQPS bounds the requests accepted per second with a token bucket of
// n tokens per second and a burst of n. A request beyond it is answered at
// once with an ApplicationException saying the server is overloaded (see
// [Server] for the wire form) and counted in Stats().RejectedQPS.
// Default 0: no limit.
func WithMaxQPS(n int) Option {
	return optionFunc(func(c *config) { c.maxQPS = n })
}

// WithReadTimeout bounds the time to read one request: once the server
// has read the first bytes of a request and waits for more, the whole rest
// of it must arrive within d, however it trickles in, or the connection is
// closed. A request waited for holds a goroutine of the server's pool, so
// without a bound clients that stop halfway through a request would hold
// the server's goroutines for good. It does not apply between requests: an
// idle connection waits for its next request as long as it likes (see
// WithIdleTimeout). Default [DefaultReadTimeout] (5 s); 0 turns the bound
// off.
func WithReadTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.readTimeout = d })
}

// WithWriteTimeout bounds the writing of each batch of replies from its
// first wait for a full socket: a client that stops reading, or reads just
// fast enough to keep the socket from staying full, has its connection
// closed when it passes. The goroutines writing a connection's replies are
// the server's pool's, so without a bound clients that send requests and
// never read the replies would hold them for good. Default
// [DefaultWriteTimeout] (5 s); 0 turns the bound off.
func WithWriteTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.writeTimeout = d })
}

// WithIdleTimeout closes connections that receive nothing for d. Default 0:
// never.
func WithIdleTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.idleTimeout = d })
}

// WithMaxMessageSize sets the largest frame (for Buffered, the largest
// message) the server reads, in bytes. It is checked against the frame's
// length field before the body is read (a Buffered message, which has none,
// is read no further than the limit); a larger frame closes the
// connection. Before it does, a request whose message header has arrived
// is answered with a PROTOCOL_ERROR exception naming its size (Buffered:
// saying it is over) and the limit (on TTHeader with "crrst", so that a
// pooling client drops the connection). Default [DefaultMaxMessageSize]
// (16 MiB).
func WithMaxMessageSize(n int) Option {
	return optionFunc(func(c *config) { c.maxMsgSize = n })
}

// WithExitWaitTime bounds how long Stop drains: after Stop is called the
// server goes on answering until every request it has read is answered and
// no request has arrived for a short quiet period, or until d has passed,
// whichever comes first; then it closes the connections. Default
// [DefaultExitWaitTime] (5 s).
func WithExitWaitTime(d time.Duration) Option {
	return optionFunc(func(c *config) { c.exitWait = d })
}

func (c *config) validate() error {
	switch {
	case c.maxConns < 0:
		return configErr("WithMaxConnections", c.maxConns)
	case c.maxQPS < 0:
		return configErr("WithMaxQPS", c.maxQPS)
	case c.maxInFlight < 0:
		return configErr("WithMaxInFlight", c.maxInFlight)
	case c.readTimeout < 0:
		return configErr("WithReadTimeout", c.readTimeout)
	case c.writeTimeout < 0:
		return configErr("WithWriteTimeout", c.writeTimeout)
	case c.idleTimeout < 0:
		return configErr("WithIdleTimeout", c.idleTimeout)
	case c.maxMsgSize <= 0:
		return configErr("WithMaxMessageSize", c.maxMsgSize)
	case c.exitWait < 0:
		return configErr("WithExitWaitTime", c.exitWait)
	case c.reg.grace < 0:
		return configErr("WithDeregisterGrace", c.reg.grace)
	case c.reg.nilGiven:
		return errors.New("server: WithRegistry got a nil Registry")
	}
	return nil
}
