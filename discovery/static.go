package discovery

import (
	"context"
	"sync"
)

// Static is a Resolver over a list the program sets: every service name
// resolves to the same list. [Static.Set] replaces it, and watchers see the
// change. It is safe for concurrent use. The zero value lists no instance
// until Set.
type Static struct {
	mu      sync.Mutex
	list    []Instance    // guarded by mu; never modified, only replaced
	version uint64        // guarded by mu; incremented by Set
	changed chan struct{} // guarded by mu; closed and replaced by Set; nil until needed in a zero Static
}

// NewStatic returns a Static resolver listing instances.
func NewStatic(instances ...Instance) *Static {
	return &Static{list: clone(instances), changed: make(chan struct{})}
}

// NewStaticAddrs returns a Static resolver listing addrs, each with the
// default weight and no tags.
func NewStaticAddrs(addrs ...string) *Static {
	list := make([]Instance, len(addrs))
	for i, a := range addrs {
		list[i].Address = a
	}
	return &Static{list: list, changed: make(chan struct{})}
}

// Set replaces the list; watchers' Next returns it.
func (s *Static) Set(instances ...Instance) {
	list := clone(instances)
	s.mu.Lock()
	s.list = list
	s.version++
	if s.changed != nil { // nil in a zero Static nobody waited on yet
		close(s.changed)
	}
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// Resolve returns a copy of the list.
func (s *Static) Resolve(ctx context.Context, service string) ([]Instance, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	list := s.list
	s.mu.Unlock()
	return clone(list), nil
}

// Watch returns a Watcher of the list. It starts no goroutine.
func (s *Static) Watch(ctx context.Context, service string) (Watcher, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &staticWatcher{s: s, closed: make(chan struct{})}, nil
}

type staticWatcher struct {
	s         *Static
	seen      uint64 // the version Next last returned; owned by Next's caller
	started   bool   // Next returned once; owned by Next's caller
	closeOnce sync.Once
	closed    chan struct{}
}

func (w *staticWatcher) Next(ctx context.Context) ([]Instance, error) {
	for {
		select {
		case <-w.closed:
			return nil, ErrWatcherClosed
		default:
		}
		w.s.mu.Lock()
		if w.s.changed == nil { // a zero Static: the channel Set will close
			w.s.changed = make(chan struct{})
		}
		list, version, changed := w.s.list, w.s.version, w.s.changed
		w.s.mu.Unlock()
		if !w.started || version != w.seen {
			w.started, w.seen = true, version
			return clone(list), nil
		}
		select {
		case <-changed:
		case <-w.closed:
			return nil, ErrWatcherClosed
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (w *staticWatcher) Close() error {
	w.closeOnce.Do(func() { close(w.closed) })
	return nil
}
