package client

// MuxFlushing reports whether a flush of one of the client's multiplexed
// connections is under way (started and not ended).
func MuxFlushing(c *Client) bool {
	if c.mux == nil {
		return false
	}
	c.mux.mu.RLock()
	defer c.mux.mu.RUnlock()
	for mc := range c.mux.live {
		if uint64(mc.flushes.Load()) > mc.flushGen.Load() {
			return true
		}
	}
	return false
}

// MuxPending returns the number of calls waiting on the client's
// multiplexed connections (registered, their reply not yet in).
func MuxPending(c *Client) int {
	if c.mux == nil {
		return 0
	}
	c.mux.mu.RLock()
	defer c.mux.mu.RUnlock()
	n := 0
	for mc := range c.mux.live {
		n += int(mc.inflight.Load())
	}
	return n
}

// SeqNow returns the client's last sequence id; SetSeq sets it, so that
// the next call takes v+1.
func SeqNow(c *Client) int32    { return c.seq.Load() }
func SetSeq(c *Client, v int32) { c.seq.Store(v) }
