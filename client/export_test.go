package client

import (
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/transport"
)

// IdleConns returns whether each idle connection the long pool keeps for
// addr is active, oldest first (nil without a long pool).
func IdleConns(c *Client, addr string) []bool {
	p, ok := c.pool.(*longPool)
	if !ok {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []bool
	for _, pc := range p.idle[addr] {
		out = append(out, pc.conn.IsActive())
	}
	return out
}

// MuxConns returns the number of multiplexed connections whose reader runs.
func MuxConns(c *Client) int {
	if c.mux == nil {
		return 0
	}
	c.mux.mu.RLock()
	defer c.mux.mu.RUnlock()
	return len(c.mux.live)
}

// DecodeReply runs the reply decoder on a message body and a TTHeader's
// string info, as the reply to a call of its own name.
func DecodeReply(typ thrift.MessageType, body []byte, result thrift.FastCodec, strInfo map[string]string) error {
	h := &transport.Header{Protocol: transport.TTHeader, StrInfo: strInfo}
	return decodeReply(typ, "m", body, result, h, "m", "test")
}

// MuxWrites returns the requests written and the flushes done by the live
// multiplexed connections.
func MuxWrites(c *Client) (sends, flushes int64) {
	c.mux.mu.RLock()
	defer c.mux.mu.RUnlock()
	for mc := range c.mux.live {
		sends += mc.sends.Load()
		flushes += mc.flushes.Load()
	}
	return sends, flushes
}

// LongPoolSweeps returns how many times the long pool's janitor has run
// (0 without a long pool).
func LongPoolSweeps(c *Client) int64 {
	if p, ok := c.pool.(*longPool); ok {
		return p.sweeps.Load()
	}
	return 0
}

// LongIdleCounts returns the long pool's count of idle connections and the
// number its idle lists hold (they must agree).
func LongIdleCounts(c *Client) (counted, listed int) {
	p, ok := c.pool.(*longPool)
	if !ok {
		return 0, 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, list := range p.idle {
		listed += len(list)
	}
	return p.nidle, listed
}
