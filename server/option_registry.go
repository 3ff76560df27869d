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
// DefaultRegistryTimeout, not by Stop's context. A Stop called while Serve
// is registering cancels the registration and waits for it as long as
// its context allows; a service registered after that is deregistered
// before Serve returns.
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

// registration is the server's state in its registry. Deregistering
// calls the registry with mu held; register calls it without, so that
// Stop can cut a registration short (cancel) and wait for it (done) no
// longer than its context allows.
type registration struct {
	mu       sync.Mutex
	services []string           // guarded by mu: registered, not yet deregistered
	inst     discovery.Instance // guarded by mu: as registered
	stopped  bool               // guarded by mu: Stop began; register no more
	cancel   context.CancelFunc // guarded by mu: ends the registration in progress; nil before it
	done     chan struct{}      // guarded by mu: closed when register returns; nil before it starts
}

// register registers every service (Serve, before accepting). Stop ends
// it (see deregister): a service registered once Stop has begun is
// deregistered here, and register returns nil then, unless that fails.
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

	ctx, cancel := context.WithTimeout(context.Background(), DefaultRegistryTimeout)
	defer cancel()
	r := &s.reg
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return nil
	}
	done := make(chan struct{})
	r.inst, r.cancel, r.done = inst, cancel, done
	r.mu.Unlock()
	defer close(done)
	for _, name := range names {
		err := reg.Register(ctx, name, inst)
		r.mu.Lock()
		if r.stopped {
			// Stop began meanwhile (and canceled ctx): it deregisters
			// the services registered before; this one, if registered,
			// is taken back here, in a time of its own.
			r.mu.Unlock()
			if err != nil {
				return nil
			}
			dctx, dcancel := context.WithTimeout(context.Background(), DefaultRegistryTimeout)
			defer dcancel()
			if err := reg.Deregister(dctx, name, inst); err != nil {
				return fmt.Errorf("server: deregistering service %s (%s), registered as Stop began: %w", name, inst.Address, err)
			}
			return nil
		}
		if err != nil {
			err = fmt.Errorf("server: registering service %s as %s: %w", name, inst.Address, err)
			// Take back what was registered, in a time of its own: ctx
			// may be what ended the registration.
			dctx, dcancel := context.WithTimeout(context.Background(), DefaultRegistryTimeout)
			defer dcancel()
			err = errors.Join(err, s.deregisterLocked(dctx))
			r.mu.Unlock()
			return err
		}
		r.services = append(r.services, name)
		r.mu.Unlock()
	}
	return nil
}

// deregister removes the server's services from the registry, then waits
// for the grace period (Stop). A registration in progress is canceled and
// waited for as long as ctx allows (what it registers after that it takes
// back itself). The deregistration outlives ctx (its values are kept),
// within DefaultRegistryTimeout; ctx bounds the grace period.
func (s *Server) deregister(ctx context.Context) error {
	if s.cfg.reg.registry == nil {
		return nil
	}
	r := &s.reg
	r.mu.Lock()
	r.stopped = true
	cancel, done := r.cancel, r.done
	r.mu.Unlock()
	if cancel != nil {
		cancel()
		waitDone(ctx, done)
	}
	dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), DefaultRegistryTimeout)
	defer dcancel()
	r.mu.Lock()
	registered := len(r.services) > 0
	err := s.deregisterLocked(dctx)
	r.mu.Unlock()
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
