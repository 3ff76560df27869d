package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/petrel-rpc/petrel/discovery"
)

// DefaultRegistryTimeout bounds the registration of a server's services
// when it starts serving, and their deregistration when it stops
// (WithRegistry).
const DefaultRegistryTimeout = 5 * time.Second

// regConfig is what WithRegistry and WithDeregisterGrace set.
type regConfig struct {
	registry discovery.Registry // nil: none
	instance discovery.Instance
	grace    time.Duration
	nilGiven bool // WithRegistry was given a nil Registry (a configuration error)
}

// WithRegistry announces the server in reg: once Run or Serve has its
// listener and before it accepts, every registered service is registered
// as inst (within DefaultRegistryTimeout; a failure makes Run/Serve return
// the error without serving), and Stop deregisters them first, before it
// drains, so that clients stop picking the server while it still answers.
// Stop deregisters them even when its context has ended (a server gone
// must not stay registered): deregistering them is bounded by
// DefaultRegistryTimeout, not by Stop's context.
// When Serve fails after registering (a listener it cannot poll, or one
// that fails while serving), it deregisters them before it returns.
// An empty inst.Address is filled with the listener's address, which must
// then name a host (not 0.0.0.0 or ::). Default: none.
func WithRegistry(reg discovery.Registry, inst discovery.Instance) Option {
	return optionFunc(func(c *config) {
		// Fields, not the struct: WithDeregisterGrace may come first.
		c.reg.registry, c.reg.instance, c.reg.nilGiven = reg, inst, reg == nil
	})
}

// WithDeregisterGrace makes Stop, after deregistering the server
// (WithRegistry), go on serving normally for d before it drains, so that
// clients watching the registry stop picking the server before it refuses
// new requests as shutting down. Stop's context bounds the wait. Default 0:
// Stop drains right after deregistering.
func WithDeregisterGrace(d time.Duration) Option {
	return optionFunc(func(c *config) { c.reg.grace = d })
}

// registration is the server's state in its registry.
type registration struct {
	mu       sync.Mutex
	services []string           // guarded by mu: registered, not yet deregistered
	inst     discovery.Instance // guarded by mu: as registered
	stopped  bool               // guarded by mu: Stop deregistered; register no more
}

// register registers every service (Serve, before accepting).
func (s *Server) register(ln net.Listener) error {
	reg := s.cfg.reg.registry
	if reg == nil {
		return nil
	}
	inst := s.cfg.reg.instance
	if inst.Address == "" {
		addr := ln.Addr()
		if ta, ok := addr.(*net.TCPAddr); ok && (ta.IP == nil || ta.IP.IsUnspecified()) {
			return fmt.Errorf("server: WithRegistry needs the instance's Address: the server listens on all interfaces (%s)", addr)
		}
		inst.Address = addr.String()
	}
	s.mu.Lock()
	names := make([]string, len(s.services))
	for i, svc := range s.services {
		names[i] = svc.info.Name
	}
	s.mu.Unlock()

	r := &s.reg
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), DefaultRegistryTimeout)
	defer cancel()
	r.inst = inst
	for _, name := range names {
		if err := reg.Register(ctx, name, inst); err != nil {
			err = fmt.Errorf("server: registering service %s as %s: %w", name, inst.Address, err)
			// Take back what was registered, in a time of its own: ctx
			// may be what ended the registration.
			dctx, dcancel := context.WithTimeout(context.Background(), DefaultRegistryTimeout)
			defer dcancel()
			return errors.Join(err, s.deregisterLocked(dctx))
		}
		r.services = append(r.services, name)
	}
	return nil
}

// deregister removes the server's services from the registry, then waits
// for the grace period (Stop). The deregistration outlives ctx (its values
// are kept), within DefaultRegistryTimeout; ctx bounds the grace period.
func (s *Server) deregister(ctx context.Context) error {
	if s.cfg.reg.registry == nil {
		return nil
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DefaultRegistryTimeout)
	defer cancel()
	s.reg.mu.Lock()
	s.reg.stopped = true
	registered := len(s.reg.services) > 0
	err := s.deregisterLocked(dctx)
	s.reg.mu.Unlock()
	if registered && s.cfg.reg.grace > 0 {
		t := time.NewTimer(s.cfg.reg.grace)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
	return err
}

// deregisterFailed removes the server's services from the registry when
// Serve fails after registering them (within DefaultRegistryTimeout).
func (s *Server) deregisterFailed() error {
	if s.cfg.reg.registry == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), DefaultRegistryTimeout)
	defer cancel()
	s.reg.mu.Lock()
	defer s.reg.mu.Unlock()
	return s.deregisterLocked(ctx)
}

func (s *Server) deregisterLocked(ctx context.Context) error {
	r := &s.reg
	var errs []error
	for _, name := range r.services {
		if err := s.cfg.reg.registry.Deregister(ctx, name, r.inst); err != nil {
			errs = append(errs, fmt.Errorf("server: deregistering service %s (%s): %w", name, r.inst.Address, err))
		}
	}
	r.services = nil
	return errors.Join(errs...)
}
