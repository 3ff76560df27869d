package server

import (
	"strconv"
	"strings"
	"sync"

	"github.com/petrel-rpc/petrel/codec/thrift"
)

// method is one method of a registered service, with pools for its argument
// and result structs.
type method struct {
	svc  *service
	info *thrift.MethodInfo

	// Pools hold cleared structs. A struct is pooled only if it can clear
	// itself (generated structs' InitDefault): FastRead sets only the fields
	// present in the input, so a reused struct must start cleared.
	// Clearing drops the struct's references, so a handler that keeps a
	// request it was given (args.Req) keeps its own value: FastRead
	// allocates nested values afresh.
	poolArgs   bool
	poolResult bool
	args       sync.Pool
	result     sync.Pool
}

type initDefaulter interface{ InitDefault() }

func newMethod(svc *service, mi *thrift.MethodInfo) *method {
	m := &method{svc: svc, info: mi}
	_, m.poolArgs = mi.NewArgs().(initDefaulter)
	m.args.New = func() any { return mi.NewArgs() }
	if !mi.Oneway {
		_, m.poolResult = mi.NewResult().(initDefaulter)
		m.result.New = func() any { return mi.NewResult() }
	}
	return m
}

func (m *method) getArgs() thrift.FastCodec {
	if m.poolArgs {
		return m.args.Get().(thrift.FastCodec)
	}
	return m.info.NewArgs()
}

func (m *method) putArgs(v thrift.FastCodec) {
	if m.poolArgs {
		v.(initDefaulter).InitDefault()
		m.args.Put(v)
	}
}

func (m *method) getResult() thrift.FastCodec {
	if m.info.Oneway {
		return nil
	}
	if m.poolResult {
		return m.result.Get().(thrift.FastCodec)
	}
	return m.info.NewResult()
}

func (m *method) putResult(v thrift.FastCodec) {
	if v != nil && m.poolResult {
		v.(initDefaulter).InitDefault()
		m.result.Put(v)
	}
}

// lookup finds the method a request names. name may alias the connection's
// buffer: lookups do not keep it and do not allocate. idlSvc and toSvc are
// the TTHeader IDL service name ("isn", which Kitex clients send) and
// callee service ("" when none). A registered service that idlSvc names
// answers alone, as on a Kitex server: when it lacks the method, lookup
// finds none (but for an Apache multiplexed name, which names its service
// itself). The callee name is a deployment name that may match a service
// by chance: that service is preferred when it has the method.
func (s *Server) lookup(name, idlSvc, toSvc string) *method {
	if idlSvc != "" {
		if ms, ok := s.bySvc[idlSvc]; ok {
			if m, ok := ms[name]; ok {
				return m
			}
			if strings.IndexByte(name, ':') < 0 {
				return nil
			}
		}
	}
	if toSvc != "" {
		if ms, ok := s.bySvc[toSvc]; ok {
			if m, ok := ms[name]; ok {
				return m
			}
		}
	}
	if m, ok := s.byName[name]; ok {
		return m
	}
	// Apache TMultiplexedProtocol: "Service:method".
	for i := 0; i < len(name); i++ {
		if name[i] == ':' {
			if ms, ok := s.bySvc[name[:i]]; ok {
				return ms[name[i+1:]]
			}
			break
		}
	}
	return nil
}

// unknownMethodText is the message that answers a request for name, which
// lookup did not find: for an Apache multiplexed name "Service:method" it
// says whether the service is unknown or lacks the method, and so it does
// for a registered service that the IDL service name idlSvc names.
func (s *Server) unknownMethodText(name, idlSvc string) string {
	if svc, meth, ok := strings.Cut(name, ":"); ok {
		if _, known := s.bySvc[svc]; !known {
			return "server: unknown service " + quoteName(svc) + " in the method name " + quoteName(name)
		}
		return "server: service " + quoteName(svc) + " has no method " + quoteName(meth)
	}
	if _, known := s.bySvc[idlSvc]; known && idlSvc != "" {
		return "server: service " + quoteName(idlSvc) + " (the request's IDL service name) has no method " + quoteName(name)
	}
	return "server: unknown method " + quoteName(name)
}

// quoteName quotes a name the client sent for an error's text, its first
// maxQuotedName bytes only: quoting takes up to 4 bytes a byte, and a reply
// to a name of megabytes would be larger than the request, and than the
// message size both sides accept.
func quoteName(name string) string {
	if len(name) <= maxQuotedName {
		return strconv.Quote(name)
	}
	return strconv.Quote(name[:maxQuotedName]) + "... (" + strconv.Itoa(len(name)) + " bytes)"
}

const maxQuotedName = 256
