package transport

// SeenLen reports how many strings h remembers from earlier frames.
func SeenLen(h *Header) (ints, strs int) { return len(h.intSeen), len(h.strSeen) }

// Remember limits, for tests.
const (
	MaxSeen     = maxSeen
	RememberMax = rememberMax
)
