package server_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/discovery"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

// fakeRegistry records what a server registers.
type fakeRegistry struct {
	mu       sync.Mutex
	events   []string
	inst     discovery.Instance
	srv      *server.Server // when set, Deregister records whether it drained
	drained  bool
	failWith error
	// ctxBound makes Deregister fail with ctx's error once ctx has
	// ended, removing nothing, as a registry across the network does.
	ctxBound bool
	// hangOn makes Register of that service wait until ctx ends.
	hangOn string
}

func (f *fakeRegistry) Register(ctx context.Context, service string, inst discovery.Instance) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failWith != nil {
		return f.failWith
	}
	if service == f.hangOn {
		f.mu.Unlock()
		<-ctx.Done()
		f.mu.Lock()
		return ctx.Err()
	}
	f.events = append(f.events, "register "+service)
	f.inst = inst
	return nil
}

func (f *fakeRegistry) Deregister(ctx context.Context, service string, inst discovery.Instance) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ctxBound && ctx.Err() != nil {
		return ctx.Err()
	}
	f.events = append(f.events, "deregister "+service+" "+inst.Address)
	if f.srv != nil && f.srv.Draining() {
		f.drained = true
	}
	return nil
}

func (f *fakeRegistry) snapshot() ([]string, discovery.Instance) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.events...), f.inst
}

// awaitRegistered waits up to 3 s for the server's first registration.
func (f *fakeRegistry) awaitRegistered(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		if ev, _ := f.snapshot(); len(ev) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the server did not register")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestRegistryLifecycle(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	reg := &fakeRegistry{}
	s := server.New(server.WithListener(ln), server.WithRegistry(reg, discovery.Instance{Weight: 5, Tags: map[string]string{"zone": "a"}}))
	reg.srv = s
	if err := s.RegisterService(echotest.EchoServiceInfo, &handler{}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run() }()
	reg.awaitRegistered(t)
	ev, inst := reg.snapshot()
	if len(ev) != 1 || ev[0] != "register Echo" || inst.Address != addr || inst.Weight != 5 || inst.Tags["zone"] != "a" {
		t.Fatalf("registered %v as %+v, want Echo at %s with weight 5 and its tags", ev, inst, addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ev, _ = reg.snapshot()
	if len(ev) != 2 || ev[1] != "deregister Echo "+addr {
		t.Fatalf("events %v, want a deregistration at Stop", ev)
	}
	if reg.drained {
		t.Fatal("the server deregistered after it began draining")
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if ev, _ := reg.snapshot(); len(ev) != 2 {
		t.Fatalf("a second Stop deregistered again: %v", ev)
	}
}

func TestRegistryFailureStopsServe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("registry down")
	reg := &fakeRegistry{failWith: boom}
	s := server.New(server.WithRegistry(reg, discovery.Instance{Address: "10.0.0.1:1"}))
	if err := s.RegisterService(echotest.EchoServiceInfo, &handler{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(ln); !errors.Is(err, boom) {
		t.Fatalf("Serve with a failing registry = %v", err)
	}
	if c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		c.Close()
		t.Fatal("the listener is still open after the registration failed")
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestRegistryNeedsAddressOnWildcard(t *testing.T) {
	s, reg, ln := registeredEcho(t, ":0")
	if err := s.Serve(ln); err == nil || !strings.Contains(err.Error(), "Address") {
		t.Fatalf("Serve on a wildcard listener without an address = %v", err)
	}
	if ev, _ := reg.snapshot(); len(ev) != 0 {
		t.Fatalf("registered %v", ev)
	}
}

func TestRegistryStopBeforeServe(t *testing.T) {
	reg := &fakeRegistry{}
	s := server.New(server.WithRegistry(reg, discovery.Instance{Address: "10.0.0.1:1"}))
	if err := s.RegisterService(echotest.EchoServiceInfo, &handler{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(ln); !errors.Is(err, server.ErrServerStopped) {
		t.Fatalf("Serve after Stop = %v", err)
	}
	if ev, _ := reg.snapshot(); len(ev) != 0 {
		t.Fatalf("a stopped server registered: %v", ev)
	}
}

func TestDeregisterGrace(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const grace = 300 * time.Millisecond
	reg := &fakeRegistry{}
	s := server.New(server.WithListener(ln), server.WithRegistry(reg, discovery.Instance{}), server.WithDeregisterGrace(grace))
	if err := s.RegisterService(echotest.EchoServiceInfo, &handler{}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run() }()
	c := dial(t, ln.Addr().String(), transport.TTHeader)
	if res, rep := c.call(1, "echo", "before", nil); rep.ex != nil || res.Success == nil {
		t.Fatalf("before Stop: %+v %+v", res, rep)
	}
	start := time.Now()
	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		stopped <- s.Stop(ctx)
	}()
	deadline := time.Now().Add(3 * time.Second)
	for {
		if ev, _ := reg.snapshot(); len(ev) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Stop did not deregister")
		}
		time.Sleep(time.Millisecond)
	}
	// Deregistered, within the grace period: still served normally.
	if res, rep := c.call(2, "echo", "during grace", nil); rep.ex != nil || res.Success == nil || res.Success.Msg != "during grace" {
		t.Fatalf("during the grace period: %+v %+v", res, rep)
	}
	if time.Since(start) < grace && s.Draining() {
		t.Fatal("the server drains within the grace period")
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < grace {
		t.Fatalf("Stop returned after %v, before the grace period (%v)", d, grace)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := server.New(server.WithDeregisterGrace(-1)).Run(); err == nil || !strings.Contains(err.Error(), "WithDeregisterGrace") {
		t.Fatalf("a negative grace: %v", err)
	}
}

// wrappedListener hides the TCP listener it wraps, as a TLS or
// rate-limiting listener does: the server cannot poll it.
type wrappedListener struct{ net.Listener }

// TestRegistryServeFailureDeregisters: a listener Serve registers the
// services for and then cannot serve leaves no instance in the registry
// (clients would pick a server that does not answer).
func TestRegistryServeFailureDeregisters(t *testing.T) {
	s, reg, ln := registeredEcho(t, "127.0.0.1:0")
	if err := s.Serve(wrappedListener{ln}); err == nil {
		t.Fatal("Serve of a listener it cannot poll succeeded")
	}
	ev, _ := reg.snapshot()
	want := []string{"register Echo", "deregister Echo " + ln.Addr().String()}
	if strings.Join(ev, "; ") != strings.Join(want, "; ") {
		t.Fatalf("registry events %q, want %q", ev, want)
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ev, _ := reg.snapshot(); len(ev) != 2 {
		t.Fatalf("Stop deregistered again: %v", ev)
	}
}

// registeredEcho returns a server of the Echo service with a fakeRegistry
// and no instance fields set, and a listener on addr for it to serve.
func registeredEcho(t *testing.T, addr string) (*server.Server, *fakeRegistry, net.Listener) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	reg := &fakeRegistry{}
	s := server.New(server.WithRegistry(reg, discovery.Instance{}))
	if err := s.RegisterService(echotest.EchoServiceInfo, &handler{}); err != nil {
		t.Fatal(err)
	}
	return s, reg, ln
}

// TestStopEndedContextDeregisters: a Stop whose context has already ended
// (a shutdown deadline spent elsewhere) still takes the server out of the
// registry, or clients go on picking an instance that is gone; it returns
// the context's error, and Serve returns.
func TestStopEndedContextDeregisters(t *testing.T) {
	s, reg, ln := registeredEcho(t, "127.0.0.1:0")
	reg.ctxBound = true
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	reg.awaitRegistered(t)
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Stop(ended); !errors.Is(err, context.Canceled) {
		t.Errorf("Stop with an ended context = %v, want context.Canceled", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	ev, _ := reg.snapshot()
	want := []string{"register Echo", "deregister Echo " + ln.Addr().String()}
	if strings.Join(ev, "; ") != strings.Join(want, "; ") {
		t.Fatalf("registry events %q, want %q: the stopped server is still registered", ev, want)
	}
}

// TestRegistryTimeoutTakesBack: when registering the second service times
// out (DefaultRegistryTimeout), the first, already registered, is
// deregistered before Serve returns the error; the deadline that ended the
// registration does not end the deregistration too.
func TestRegistryTimeoutTakesBack(t *testing.T) {
	s, reg, ln := registeredEcho(t, "127.0.0.1:0")
	reg.ctxBound = true
	reg.hangOn = "Echo2"
	second := *echotest.EchoServiceInfo
	second.Name = "Echo2"
	if err := s.RegisterService(&second, &handler{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(ln); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Serve with a registry that does not answer = %v", err)
	}
	ev, _ := reg.snapshot()
	want := []string{"register Echo", "deregister Echo " + ln.Addr().String()}
	if strings.Join(ev, "; ") != strings.Join(want, "; ") {
		t.Fatalf("registry events %q, want %q: a server that never served is still registered", ev, want)
	}
}
