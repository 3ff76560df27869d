// Package netpoll is Petrel's network library: pollers over epoll (Linux) and
// kqueue (macOS, FreeBSD), connections with nocopy buffers, an event loop that
// runs a handler when a connection has input, and a Dialer.
//
// # Model
//
// A small number of pollers (see [SetNumPollers]) each wait on an epoll or
// kqueue instance. Every registered socket carries a pointer to its operator in
// the event's user data, so an event is dispatched without a lookup. The poller
// reads arriving bytes itself, with one non-blocking readv into the
// connection's input [buf.LinkBuffer], and hands the connection to a goroutine
// from a [gopool.Pool] that runs the [Config.OnRequest] handler. A handler
// writes its reply into the connection's output buffer and calls Flush, which
// sends everything queued with one write or writev from the handler's
// goroutine; only when the socket is full does it wait for the poller.
//
// After a batch of events a poller yields the processor with runtime.Gosched
// so that the handlers it just started can run, then polls again with a zero
// timeout after a large batch, or blocks after a small one; a poller busy most
// of its time spins briefly instead of sleeping, so that the next poll returns
// a batch. Under load it rarely sleeps, and idle it costs nothing. An idle
// poller blocks in the kernel's epoll_wait or parks in the Go runtime's
// poller, whichever a wait tuner measures to cost the process less CPU per
// byte read (pollers start parked; see waittune.go). A poller holding dialed
// connections always parks when the process has no processor to spare for a
// blocked thread (GOMAXPROCS at most the number of pollers): there a blocked
// poller would keep timers and the callers they wake from running for up to
// 10 ms.
//
// # Safety
//
// Input beyond [Config.InputCap] bytes stops the poller reading that socket
// until the handler consumes it, so a slow handler bounds its connection's
// memory. Buffers are taken when bytes arrive and returned when they are
// consumed: an idle connection holds no buffer memory. A connection's liveness
// is known without I/O ([Connection.IsActive]) because the poller watches for
// the peer's close (EPOLLRDHUP, EV_EOF). Errors say what happened: closed by
// the peer, reset, timed out, closed locally.
package netpoll
