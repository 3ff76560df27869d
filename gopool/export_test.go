package gopool

// Spawned reports how many worker goroutines p has ever started.
func (p *Pool) Spawned() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.spawned
}

// DefaultPool returns the pool behind the package-level Go.
func DefaultPool() *Pool { return defaultPool }

// ResetDefaultPool closes the default pool, so its idle workers exit, and puts a
// fresh one in its place. Tests call it when no task is using the default pool.
func ResetDefaultPool() {
	old := defaultPool
	defaultPool, _ = New(DefaultConfig())
	_ = old.Close()
}

// RetireIdleThen retires every idle worker as the idle timer (reap) does:
// it takes them off the idle stack, stopping the timer if no other worker
// is left, and then wakes them with no task. It runs f in between, so f
// can submit while the retired workers have not woken yet.
func (p *Pool) RetireIdleThen(f func()) {
	p.mu.Lock()
	old := p.idle
	p.idle = nil
	if p.workers-len(old) == 0 && p.reaper != nil {
		p.reaper.Stop()
		p.reaperOn = false
	}
	p.mu.Unlock()
	f()
	for _, w := range old {
		w.wake <- struct{}{} // fn is nil: exit
	}
}

// Ticks reports how many times the idle timer has run.
func (p *Pool) Ticks() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.epoch
}
