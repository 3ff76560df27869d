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
