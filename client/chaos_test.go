package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/rpcerr"
)

// fault is what faultyProxy does to one proxied connection.
type fault int

const (
	faultNone     fault = iota
	faultReset          // reset both sides after some bytes
	faultClose          // close both sides (FIN) after some bytes
	faultStall          // stop forwarding for a while after some bytes
	faultFragment       // forward one byte per write
	numFaults
)

// faultyProxy forwards TCP connections to a server and, while faults are
// on, breaks some of them: each connection draws a fault from its own
// seeded source and applies it after a random number of bytes, in one
// direction.
type faultyProxy struct {
	ln     net.Listener
	target string
	seed   atomic.Uint64
	on     atomic.Bool
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
	drawn  [numFaults]atomic.Int64
	// triggered counts the faults applied (a drawn fault is applied only
	// if its connection carries enough bytes).
	triggered atomic.Int64
}

func startFaultyProxy(t *testing.T, target string) *faultyProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &faultyProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.on.Store(true)
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *faultyProxy) addr() string { return p.ln.Addr().String() }

func (p *faultyProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *faultyProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *faultyProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		if !p.track(c) || !p.track(s) {
			c.Close()
			s.Close()
			return
		}
		f := faultNone
		rng := rand.New(rand.NewPCG(p.seed.Add(1), 7))
		if p.on.Load() {
			f = fault(1 + rng.IntN(int(numFaults)-1))
		}
		p.drawn[f].Add(1)
		after := rng.IntN(3000) // a pooled connection carries tens of calls
		toServer := rng.IntN(2) == 0
		p.wg.Add(2)
		ended := new(atomic.Int32)
		go p.pump(s, c, f, after, toServer, rng.Uint64(), ended)
		go p.pump(c, s, f, after, !toServer, rng.Uint64(), ended)
	}
}

// pump copies src to dst; when faulty, it applies f after `after` bytes.
// At src's EOF it half-closes dst; both connections are closed once both
// directions ended, or at once by a fault or an error.
func (p *faultyProxy) pump(dst, src net.Conn, f fault, after int, faulty bool, seed uint64, ended *atomic.Int32) {
	defer p.wg.Done()
	closeBoth := true
	defer func() {
		if closeBoth || ended.Add(1) == 2 {
			src.Close()
			dst.Close()
		}
	}()
	if !faulty {
		f = faultNone
	}
	rng := rand.New(rand.NewPCG(seed, 11))
	buf := make([]byte, 4096)
	seen := 0
	// A stall or a fragmenting stretch ends in a reset, fragmentEnd or
	// stallEnd bytes after it began, so that a pooled connection does not
	// outlive its fault.
	const fragmentEnd, stallEnd = 500, 2000
	for {
		n, err := src.Read(buf)
		b := buf[:n]
		for len(b) > 0 {
			k := len(b)
			if f != faultNone && seen < after && seen+k > after {
				k = after - seen // stop at the fault's byte
			}
			if f != faultNone && seen >= after {
				switch {
				case f == faultReset,
					f == faultFragment && seen >= after+fragmentEnd,
					f == faultStall && seen >= after+stallEnd:
					p.triggered.Add(1)
					for _, c := range []net.Conn{src, dst} {
						if tc, ok := c.(*net.TCPConn); ok {
							tc.SetLinger(0)
						}
					}
					return
				case f == faultClose:
					p.triggered.Add(1)
					return
				case f == faultStall && seen == after:
					p.triggered.Add(1)
					time.Sleep(time.Duration(100+rng.IntN(900)) * time.Millisecond)
				case f == faultFragment:
					k = 1
				}
			}
			if _, werr := dst.Write(b[:k]); werr != nil {
				return
			}
			seen += k
			b = b[k:]
		}
		if err != nil {
			if tc, ok := dst.(*net.TCPConn); ok && errors.Is(err, io.EOF) {
				tc.CloseWrite() // the other direction goes on until it ends
				closeBoth = false
			}
			return
		}
	}
}

// TestChaosProxy: calls go through a proxy that resets, closes, stalls or
// fragments each connection at a random byte (of the first 3,000), in
// either direction.
// Every call returns within its timeout (plus scheduling slack); a call
// that succeeds has its own reply (never another call's: sequence ids
// keep multiplexed replies apart); a call that fails has a connection,
// timeout or protocol error, never a panic or an internal error. Once
// the faults stop, every pool serves calls again, and nothing leaks
// (goleak in TestMain).
func TestChaosProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos: long")
	}
	_, addr := startPetrel(t)
	for i, s := range setups() {
		t.Run(s.name, func(t *testing.T) {
			p := startFaultyProxy(t, addr)
			p.seed.Store(uint64(i) << 32)
			const timeout = 300 * time.Millisecond
			c := newClient(t, p.addr(), s, client.WithRPCTimeout(timeout), client.WithConnectTimeout(timeout))
			var ok, failed atomic.Int64
			codes := make([]atomic.Int64, 16)
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			began := time.Now()
			for g := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for n := 0; n < 100 || (p.triggered.Load() < 8 && time.Since(began) < 3*time.Second); n++ {
						msg := fmt.Sprintf("g%d-call%d-%s", g, n, s.name)
						start := time.Now()
						res, err := echo(context.Background(), c, &echoArgs{Msg: []byte(msg)})
						if el := time.Since(start); el > timeout+time.Second {
							errs <- fmt.Errorf("call %s took %v with a timeout of %v (err %v)", msg, el, timeout, err)
							return
						}
						if err == nil {
							if string(res.Success) != msg {
								errs <- fmt.Errorf("call %s got the reply %q", msg, res.Success)
								return
							}
							ok.Add(1)
							continue
						}
						failed.Add(1)
						code := rpcerr.CodeOf(err)
						codes[code].Add(1)
						switch code {
						case rpcerr.Connection, rpcerr.Timeout, rpcerr.Protocol:
						default:
							errs <- fmt.Errorf("call %s: %v (code %v), want a connection, timeout or protocol error", msg, err, code)
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			var drawn [numFaults]int64
			for f := range drawn {
				drawn[f] = p.drawn[f].Load()
			}
			t.Logf("%d ok, %d failed; faults drawn (none, reset, close, stall, fragment) %v, %d applied; codes conn %d timeout %d protocol %d",
				ok.Load(), failed.Load(), drawn, p.triggered.Load(), codes[rpcerr.Connection].Load(), codes[rpcerr.Timeout].Load(), codes[rpcerr.Protocol].Load())
			if ok.Load() == 0 || p.triggered.Load() == 0 {
				t.Fatal("no call succeeded, or no fault was applied: the test tests nothing")
			}
			// Healed: the pool drops what broke and serves again.
			p.on.Store(false)
			deadline := time.Now().Add(5 * time.Second)
			for good := 0; good < 10; {
				msg := fmt.Sprintf("after-%d", good)
				res, err := echo(context.Background(), c, &echoArgs{Msg: []byte(msg)})
				switch {
				case err == nil && string(res.Success) == msg:
					good++
				case err == nil:
					t.Fatalf("after the faults: call %s got %q", msg, res.Success)
				case time.Now().After(deadline):
					t.Fatalf("after the faults: still failing 5 s later: %v", err)
				}
			}
		})
	}
}
