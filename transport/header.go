package transport

// Header is what a frame carries beside its payload. ReadFrame fills it
// (resetting it first); BeginFrame and WriteMessage encode it. Only TTHeader
// frames carry Flags, the info maps and the ACL token; Framed and Buffered
// frames carry none of them.
//
// A Header is meant to be reused, one per connection or per goroutine: Reset
// keeps the maps' memory (that of small maps), and decoding reuses the strings of the previous
// frames when a key comes back with the same value, so a steady stream of
// requests with the same service, method and timeout decodes its headers
// without allocating. Strings put in the maps by ReadFrame are ordinary
// immutable Go strings: they stay valid after the reader is released.
//
// A Header must not be used by two goroutines at once.
type Header struct {
	// Protocol is the frame's protocol.
	Protocol Protocol
	// SeqID is TTHeader's SEQUENCE NUMBER: ReadFrame reads it and
	// BeginFrame writes it. ReadMessage also sets it to the Thrift message's
	// sequence id for the other protocols, which have no frame sequence
	// number. WriteMessage neither reads nor sets it: its seq argument is
	// both the frame's and the message's sequence id.
	SeqID int32
	// Flags is TTHeader's FLAGS field (see the Flag constants).
	Flags uint16
	// PayloadProtocol is how the message is encoded: PayloadBinary (0) or
	// PayloadCompact (2). For TTHeader it is the PROTOCOL ID byte; for
	// Framed ReadFrame sets it from the message's first byte.
	PayloadProtocol uint8
	// IntInfo is TTHeader's INFO_INTKEYVALUE block: uint16 keys (see the
	// Key constants, which match Kitex's) to string values.
	IntInfo map[uint16]string
	// StrInfo is TTHeader's INFO_KEYVALUE block: string keys (see the
	// StrKey constants and the metainfo prefixes) to string values.
	StrInfo map[string]string
	// ACLToken is TTHeader's INFO_ACL_TOKEN block (Kitex's "gdpr-token").
	ACLToken string

	// intSeen, strSeen and aclSeen remember the strings decoded from earlier
	// frames, so that a repeated key and value cost no allocation. Only
	// strings of headers up to rememberMax bytes are remembered (each keeps
	// its header's copy alive), at most maxSeen per map: a Header retains
	// at most about 2*maxSeen*rememberMax bytes.
	intSeen map[uint16]string
	strSeen map[string]strPair
	aclSeen string
}

// strPair is a key and value decoded together.
type strPair struct{ key, val string }

// maxSeen bounds the remembered strings of a Header; rememberMax is the
// largest header whose strings are remembered.
const (
	maxSeen     = 32
	rememberMax = 1 << 10
)

// Reset clears h for reuse, keeping the memory of its maps unless they
// held more than maxSeen keys: a map keeps the size of the most keys it
// held, and one large header (up to MaxHeaderSize, thousands of keys) must
// not pin its memory for the rest of a connection's life.
func (h *Header) Reset() {
	h.Protocol = 0
	h.SeqID = 0
	h.Flags = 0
	h.PayloadProtocol = 0
	if len(h.IntInfo) > maxSeen {
		h.IntInfo = nil
	}
	clear(h.IntInfo)
	if len(h.StrInfo) > maxSeen {
		h.StrInfo = nil
	}
	clear(h.StrInfo)
	h.ACLToken = ""
}

// SetInt sets an integer-keyed info value, making the map if needed.
func (h *Header) SetInt(key uint16, val string) {
	if h.IntInfo == nil {
		h.IntInfo = make(map[uint16]string, 8)
	}
	h.IntInfo[key] = val
}

// SetStr sets a string-keyed info value, making the map if needed.
func (h *Header) SetStr(key, val string) {
	if h.StrInfo == nil {
		h.StrInfo = make(map[string]string, 8)
	}
	h.StrInfo[key] = val
}

// TTHeader FLAGS bits, as Kitex defines them. Petrel reads and writes the
// field as given and acts on none of the bits.
const (
	FlagSupportOutOfOrder uint16 = 0x01
	FlagStreaming         uint16 = 0x02 // TTHeader streaming (not supported by Petrel)
	FlagDuplexReverse     uint16 = 0x08
	FlagSASL              uint16 = 0x10
)

// Integer info keys (INFO_INTKEYVALUE), with the numbers Kitex uses
// (cloudwego/gopkg protocol/ttheader and kitex pkg/remote/transmeta).
// Values are strings; numbers are written in decimal.
const (
	KeyMeshVersion     uint16 = 0
	KeyTransportType   uint16 = 1  // "framed" or "unframed"
	KeyLogID           uint16 = 2  // log / trace id
	KeyFromService     uint16 = 3  // caller service name
	KeyFromCluster     uint16 = 4  // caller cluster
	KeyFromIDC         uint16 = 5  // caller data center
	KeyToService       uint16 = 6  // callee service name
	KeyToCluster       uint16 = 7  // callee cluster
	KeyToIDC           uint16 = 8  // callee data center
	KeyToMethod        uint16 = 9  // method called
	KeyEnv             uint16 = 10 // environment tag
	KeyDestAddress     uint16 = 11 // destination address
	KeyRPCTimeout      uint16 = 12 // whole-call timeout, decimal milliseconds
	KeyReadTimeout     uint16 = 13 // read timeout, decimal milliseconds
	KeyRingHashKey     uint16 = 14
	KeyDDPTag          uint16 = 15
	KeyWithMeshHeader  uint16 = 16
	KeyConnectTimeout  uint16 = 17 // connect timeout, decimal milliseconds
	KeySpanContext     uint16 = 18
	KeyShortConnection uint16 = 19
	KeyFromMethod      uint16 = 20 // caller's method
	KeyStressTag       uint16 = 21
	KeyMsgType         uint16 = 22 // Thrift message type, decimal (1 call, 2 reply, 3 exception, 4 oneway)
	KeyHTTPContentType uint16 = 23
	KeyRawRingHashKey  uint16 = 24
	KeyLBType          uint16 = 25
	KeyClusterShardID  uint16 = 26
)

// String info keys (INFO_KEYVALUE) with a meaning in Kitex.
const (
	// StrKeyBizStatus, StrKeyBizMessage and StrKeyBizExtra carry a business
	// status error in a reply: the status code in decimal (non-zero), its
	// message, and its extra key-values as a JSON object of strings.
	StrKeyBizStatus  = "biz-status"
	StrKeyBizMessage = "biz-message"
	StrKeyBizExtra   = "biz-extra"
	// StrKeyConnReset in a reply tells a pooling client that the server is
	// shutting down and the connection must not be reused ("crrst", value
	// "1" from Kitex servers; any value counts).
	StrKeyConnReset = "crrst"
	// StrKeyIDLService is the IDL service name of the call ("isn"): the
	// Thrift service's name, which Kitex clients and Petrel's generated
	// clients (client.WithIDLServiceName) send in every request, and by
	// which a server hosting several services whose methods share a name
	// chooses one.
	StrKeyIDLService = "isn"
	// StrKeyRemoteAddr is the caller's address as a proxy saw it ("rip").
	StrKeyRemoteAddr = "rip"
)
