package client

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/petrel-rpc/petrel/endpoint"
	"github.com/petrel-rpc/petrel/stats"
	"github.com/petrel-rpc/petrel/transport"
)

// Defaults of the client options. Each With* option's comment repeats its
// default.
const (
	// DefaultTransport is the framing a client uses unless WithTransport says
	// otherwise: TTHeader, which carries the RPC deadline, the caller and
	// callee names, metainfo and business status, and is the only framing
	// a multiplexed connection can use. Petrel and Kitex servers understand
	// it; use Framed (or Buffered) for Apache Thrift servers.
	DefaultTransport = transport.TTHeader
	// DefaultConnectTimeout bounds each dial.
	DefaultConnectTimeout = 500 * time.Millisecond
	// DefaultRPCTimeout bounds each call, from the start of Call to the
	// decoded reply, when neither the call's context nor a CallOption sets a
	// shorter deadline. Petrel chooses a finite default so that a lost reply
	// never hangs a caller; WithRPCTimeout(0) removes it.
	DefaultRPCTimeout = time.Second
	// DefaultMaxMessageSize is the largest reply frame accepted, in bytes.
	DefaultMaxMessageSize = 16 << 20
	// DefaultMuxConnections is the number of connections per address of the
	// multiplexed pool: few connections give bigger write batches (one
	// writev for many calls), while more than one keeps a broken connection
	// from failing every call in flight. (With 32 concurrent callers on 2
	// cores, client and server in one process, BenchmarkMuxConnections
	// measured about 4.1, 4.3, 4.6 and 5.0 µs per call for 1, 2, 4 and 8
	// connections on 2026-11-28.)
	DefaultMuxConnections = 2
	// MaxMuxConnections is the most connections per address
	// WithMuxConnection accepts (each has its reader goroutine; the pool
	// allocates its slots up front).
	MaxMuxConnections = 1024
	// DefaultMaxIdlePerAddress is the long pool's idle connections kept per
	// address.
	DefaultMaxIdlePerAddress = 32
	// DefaultMaxIdleTimeout is how long the long pool keeps an idle
	// connection.
	DefaultMaxIdleTimeout = 30 * time.Second
)

// Option configures a Client. Options are made by the With* functions of this
// package; the set is closed.
type Option interface {
	apply(*config)
}

// CallOption configures one Call. Options are made by the With* functions of
// this package that return CallOption.
type CallOption interface {
	applyCall(*callConfig)
}

type poolKind uint8

const (
	poolLong poolKind = iota
	poolShort
	poolMux
)

func (k poolKind) String() string {
	switch k {
	case poolShort:
		return "short"
	case poolMux:
		return "mux"
	}
	return "long"
}

// LongPoolConfig configures the long-connection pool (WithLongConnection).
// Zero fields take their defaults.
type LongPoolConfig struct {
	// MaxIdlePerAddress is how many idle connections are kept per address;
	// a connection given back when that many are idle is closed. Default
	// DefaultMaxIdlePerAddress (32).
	MaxIdlePerAddress int
	// MaxIdleGlobal is how many idle connections are kept over all
	// addresses; a connection given back when that many are idle is
	// closed. Default 0: no limit but MaxIdlePerAddress's per address.
	MaxIdleGlobal int
	// MaxIdleTimeout closes connections that stayed idle this long. Default
	// DefaultMaxIdleTimeout (30s); the pool checks once per MaxIdleTimeout,
	// but not more often than every 100ms, and never hands out a
	// connection idle for longer. A connection's idle time counts from the
	// start of its last call, so one that served a long call is closed that
	// much sooner.
	MaxIdleTimeout time.Duration
}

// DefaultLongPoolConfig returns the long pool's defaults.
func DefaultLongPoolConfig() LongPoolConfig {
	return LongPoolConfig{
		MaxIdlePerAddress: DefaultMaxIdlePerAddress,
		MaxIdleTimeout:    DefaultMaxIdleTimeout,
	}
}

// Validate reports a LongPoolConfig that cannot work.
func (c *LongPoolConfig) Validate() error {
	if c.MaxIdlePerAddress < 0 {
		return fmt.Errorf("client: LongPoolConfig.MaxIdlePerAddress is %d; it must be 0 (default) or more", c.MaxIdlePerAddress)
	}
	if c.MaxIdleGlobal < 0 {
		return fmt.Errorf("client: LongPoolConfig.MaxIdleGlobal is %d; it must be 0 (no limit) or more", c.MaxIdleGlobal)
	}
	if c.MaxIdleTimeout < 0 {
		return fmt.Errorf("client: LongPoolConfig.MaxIdleTimeout is %v; it must be 0 (default) or more", c.MaxIdleTimeout)
	}
	return nil
}

func (c *LongPoolConfig) fill() {
	if c.MaxIdlePerAddress == 0 {
		c.MaxIdlePerAddress = DefaultMaxIdlePerAddress
	}
	if c.MaxIdleTimeout == 0 {
		c.MaxIdleTimeout = DefaultMaxIdleTimeout
	}
}

// config is the client configuration the options build.
type config struct {
	addrs          []string
	caller         string
	idlService     string   // WithIDLServiceName; "": none sent
	resolver       resolver // nil: a static round robin over addrs
	protocol       transport.Protocol
	connectTimeout time.Duration
	rpcTimeout     time.Duration
	methodTimeouts map[string]time.Duration // option_timeout.go; nil: none
	middleware     []endpoint.Middleware
	pool           poolKind
	long           LongPoolConfig
	muxConns       int
	maxMessageSize int
	network        string
	tracer         stats.Tracer // option_tracer.go; nil: none
	err            error        // the first invalid option

	gov govConfig // option_retry.go, option_breaker.go

	disc discConfig // option_discovery.go
}

func defaultConfig() config {
	return config{
		protocol:       DefaultTransport,
		connectTimeout: DefaultConnectTimeout,
		rpcTimeout:     DefaultRPCTimeout,
		pool:           poolLong,
		long:           DefaultLongPoolConfig(),
		muxConns:       DefaultMuxConnections,
		maxMessageSize: DefaultMaxMessageSize,
		network:        "tcp",
	}
}

func (c *config) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithHostPorts sets the static list of server addresses ("host:port"); calls
// go to them in turn (round robin), so an address listed twice gets twice
// the calls. Required unless another option supplies addresses; there is no
// default. Repeated use replaces the list. New fails if WithResolver is
// given too, and on a TCP address without a port or with a numeric port
// outside 1-65535 (a port may also be a service name, such as "http");
// with WithNetwork("unix") the addresses are socket paths, taken as they
// are.
func WithHostPorts(addrs ...string) Option {
	list := append([]string(nil), addrs...)
	return optionFunc(func(c *config) {
		if len(list) == 0 {
			c.fail(fmt.Errorf("client: WithHostPorts needs at least one address"))
			return
		}
		for _, a := range list {
			if a == "" {
				c.fail(fmt.Errorf("client: WithHostPorts got an empty address"))
				return
			}
		}
		c.addrs = list
	})
}

// checkHostPort reports a WithHostPorts address that no dial can use: a TCP
// address that is not host:port, or whose port is a number outside
// 1-65535. A port that is not a number is a service name, looked up when
// dialing.
func checkHostPort(network, addr string) error {
	if network == "unix" {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("client: WithHostPorts: %q is not host:port (%v)", addr, err)
	}
	if port == "" {
		return fmt.Errorf("client: WithHostPorts: %q has no port", addr)
	}
	if n, err := strconv.Atoi(port); (err == nil && (n < 1 || n > 65535)) || errors.Is(err, strconv.ErrRange) {
		return fmt.Errorf("client: WithHostPorts: %q has port %s, want 1 to 65535", addr, port)
	}
	return nil
}

// WithCallerName sets the calling service's name (default none), sent in
// TTHeader (Kitex's FROM_SERVICE) and shown in rpcinfo.RPCInfo.Caller.
func WithCallerName(name string) Option {
	return optionFunc(func(c *config) { c.caller = name })
}

// WithIDLServiceName sets the IDL service name of the methods the client
// calls (the Thrift service's name, such as "Hello"; default none), sent in
// every TTHeader request as the string key "isn"
// (transport.StrKeyIDLService), as Kitex clients send it. A server hosting
// several services whose methods share a name routes the call by it (the
// callee name given to New is a deployment name, not the IDL's). Framed
// and Buffered requests carry no header and send nothing.
//
// A user need not set it: the generated New<Service>Client passes it,
// before the user's options, so that a later WithIDLServiceName in those
// replaces it (the last one given wins), and WithIDLServiceName("") sends
// none. A client made by client.New and wrapped by New<Service>ClientFrom
// sends only what its own options say.
func WithIDLServiceName(name string) Option {
	return optionFunc(func(c *config) { c.idlService = name })
}

// WithNetwork sets the network of the addresses: "tcp" (default), "tcp4",
// "tcp6" or "unix" (addresses are then socket paths).
func WithNetwork(network string) Option {
	return optionFunc(func(c *config) {
		switch network {
		case "tcp", "tcp4", "tcp6", "unix":
			c.network = network
		default:
			c.fail(fmt.Errorf("client: WithNetwork(%q): want tcp, tcp4, tcp6 or unix", network))
		}
	})
}

// WithTransport sets the framing of requests and replies: transport.TTHeader
// (default, see DefaultTransport), transport.Framed or transport.Buffered.
// The multiplexed pool needs TTHeader.
func WithTransport(p transport.Protocol) Option {
	return optionFunc(func(c *config) {
		switch p {
		case transport.TTHeader, transport.Framed, transport.Buffered:
			c.protocol = p
		default:
			c.fail(fmt.Errorf("client: WithTransport(%v): unknown protocol", p))
		}
	})
}

// WithConnectTimeout bounds each dial (default DefaultConnectTimeout, 500ms).
// A dial also ends at the call's deadline. 0 leaves dials bounded only by
// the call's deadline.
func WithConnectTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) {
		if d < 0 {
			c.fail(fmt.Errorf("client: WithConnectTimeout(%v): negative", d))
			return
		}
		c.connectTimeout = d
	})
}

// WithRPCTimeout bounds every call of the client, from the start of Call to
// the decoded reply (default DefaultRPCTimeout, 1s). 0 means no client-wide
// limit: only the context's deadline and WithCallTimeout apply. A method
// with its own WithMethodTimeout uses that instead, and a call with
// WithCallTimeout its own; the context's deadline still applies when
// earlier. With TTHeader the time remaining is sent to the server, which
// gives its handler that deadline.
func WithRPCTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) {
		if d < 0 {
			c.fail(fmt.Errorf("client: WithRPCTimeout(%v): negative", d))
			return
		}
		c.rpcTimeout = d
	})
}

// WithMiddleware appends middleware around every call (default none). The
// first given is the outermost. A middleware sees the request and result
// values passed to Call (thrift.FastCodec) and a context carrying the call's
// rpcinfo, whose Deadline is the call's (the earlier of the caller's and the
// one the RPC timeout sets) while its Done and Err are the caller's
// context's: the client enforces the RPC timeout with its own timers. A
// context a middleware derives from it with a later deadline of its own
// (context.WithTimeout) therefore gets no timer, the context package
// trusting Deadline, and is done only with the caller's context (a known
// limitation: making Done close at the call's deadline cost a timer a call
// and broke context.WithoutCancel). The rpcinfo's SeqID,
// LocalAddr and RemoteAddr are the attempt's, set inside next: another
// goroutine may read them only once next has returned. A middleware may
// call next again after it returns (a retry), but not twice at once: the
// attempts of one call share its state (sequence id, headers, result).
// Concurrent attempts are retry.Policy's BackupDelay, which gives each a
// state of its own.
func WithMiddleware(mw ...endpoint.Middleware) Option {
	list := append([]endpoint.Middleware(nil), mw...)
	return optionFunc(func(c *config) {
		for _, m := range list {
			if m == nil {
				c.fail(fmt.Errorf("client: WithMiddleware got a nil middleware"))
				return
			}
		}
		c.middleware = append(c.middleware, list...)
	})
}

// WithShortConnection makes every call dial a connection of its own and
// close it afterwards. The default is WithLongConnection with
// DefaultLongPoolConfig.
func WithShortConnection() Option {
	return optionFunc(func(c *config) { c.pool = poolShort })
}

// WithLongConnection pools connections per address: a call takes an idle
// connection (or dials one) and gives it back when done. This is the
// default, with DefaultLongPoolConfig; zero fields of cfg take their
// defaults.
//
// The caller writes its request and waits for its reply on the connection
// itself, bounded by the call's deadline; a context canceled before then
// ends the write (while it waits for room in the socket) or the wait at
// once, and the connection, which holds part of a request or whose reply
// may still come, is closed.
func WithLongConnection(cfg LongPoolConfig) Option {
	return optionFunc(func(c *config) {
		if err := cfg.Validate(); err != nil {
			c.fail(err)
			return
		}
		cfg.fill()
		c.pool = poolLong
		c.long = cfg
	})
}

// WithMuxConnection shares conns connections per address among all
// concurrent calls (0: DefaultMuxConnections, 2; at most
// MaxMuxConnections). Replies are matched to calls by sequence id, and the
// requests of concurrent callers are written with one flush. It needs the
// TTHeader transport (the default). A flush that cannot finish (the peer
// stopped reading) by the latest deadline of the calls it carries fails
// the connection and the calls on it; one carrying a call without a
// deadline, within the client's RPC timeout (WithRPCTimeout; none if 0).
// The default pool is WithLongConnection.
func WithMuxConnection(conns int) Option {
	return optionFunc(func(c *config) {
		if conns < 0 || conns > MaxMuxConnections {
			c.fail(fmt.Errorf("client: WithMuxConnection(%d): want 0 (default) to MaxMuxConnections (%d)", conns, MaxMuxConnections))
			return
		}
		if conns == 0 {
			conns = DefaultMuxConnections
		}
		c.pool = poolMux
		c.muxConns = conns
	})
}

// WithMaxMessageSize sets the largest reply frame accepted, in bytes
// (default DefaultMaxMessageSize, 16 MiB). A larger reply is rejected from
// its frame header, before its body is read, with an rpcerr.Protocol error,
// and the connection is closed.
func WithMaxMessageSize(n int) Option {
	return optionFunc(func(c *config) {
		if n <= 0 {
			c.fail(fmt.Errorf("client: WithMaxMessageSize(%d): must be positive", n))
			return
		}
		c.maxMessageSize = n
	})
}

// callConfig is what CallOptions set.
type callConfig struct {
	timeout    time.Duration // valid when hasTimeout
	hasTimeout bool
	hashKey    string // WithHashKey (option_discovery.go)
}

// callTimeout is the CallOption of WithCallTimeout; a plain value, so that
// passing it allocates nothing when the duration is a constant.
type callTimeout time.Duration

func (t callTimeout) applyCall(c *callConfig) {
	c.timeout = time.Duration(t)
	c.hasTimeout = true
}

// WithCallTimeout bounds this call (default: the method's WithMethodTimeout
// if it has one, else the client's WithRPCTimeout). It replaces those for
// the call; 0 removes them, leaving the context's deadline. A negative d
// (a time budget already spent) ends the call at once with an rpcerr.Timeout
// error, the request not sent. The context's deadline still applies when
// earlier.
func WithCallTimeout(d time.Duration) CallOption { return callTimeout(d) }
