package server_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/discovery"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
)

// TestStopCancelsRegistrationInProgress checks that a Stop called while
// Serve registers with a registry that does not answer returns when its
// context ends, and deregisters what was registered before. register
// used to hold the registration's lock across the registry's calls, in a
// time of its own (DefaultRegistryTimeout, 5 s), and Stop waited for the
// lock whatever its context said.
func TestStopCancelsRegistrationInProgress(t *testing.T) {
	s, reg, ln := registeredEcho(t, "127.0.0.1:0")
	reg.hangOn = "Echo2" // Echo registers; Echo2 waits until its ctx ends
	second := *echotest.EchoServiceInfo
	second.Name = "Echo2"
	if err := s.RegisterService(&second, &handler{}); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	reg.awaitRegistered(t)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := s.Stop(ctx)
	if took := time.Since(start); took > time.Second {
		t.Fatalf("Stop with a 200 ms context returned after %v (err %v)", took.Round(time.Millisecond), err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	ev, _ := reg.snapshot()
	want := []string{"register Echo", "deregister Echo " + ln.Addr().String()}
	if strings.Join(ev, "; ") != strings.Join(want, "; ") {
		t.Fatalf("registry events %q, want %q", ev, want)
	}
}

// deafRegistry's Register ignores its context: it returns, having
// registered, only once release is closed.
type deafRegistry struct {
	entered chan struct{} // closed at the first Register
	release chan struct{}
	mu      sync.Mutex
	events  []string
}

func (r *deafRegistry) Register(ctx context.Context, service string, inst discovery.Instance) error {
	close(r.entered)
	<-r.release
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, "register "+service)
	return nil
}

func (r *deafRegistry) Deregister(ctx context.Context, service string, inst discovery.Instance) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, "deregister "+service)
	return nil
}

// TestStopTakesBackLateRegistration checks that Stop does not wait past
// its context for a registration that ignores cancellation, and that the
// service registered after Stop began is deregistered all the same before
// Serve returns. Stop used to wait for the registration to return.
func TestStopTakesBackLateRegistration(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	reg := &deafRegistry{entered: make(chan struct{}), release: make(chan struct{})}
	s := server.New(server.WithRegistry(reg, discovery.Instance{}))
	if err := s.RegisterService(echotest.EchoServiceInfo, &handler{}); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	<-reg.entered
	release := time.AfterFunc(600*time.Millisecond, func() { close(reg.release) })
	defer release.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = s.Stop(ctx)
	if took := time.Since(start); took > 400*time.Millisecond {
		t.Fatalf("Stop with a 100 ms context returned after %v (err %v)", took.Round(time.Millisecond), err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	reg.mu.Lock()
	ev := strings.Join(reg.events, "; ")
	reg.mu.Unlock()
	if want := "register Echo; deregister Echo"; ev != want {
		t.Fatalf("registry events %q, want %q: the server is still registered", ev, want)
	}
}
