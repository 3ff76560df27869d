package gen

import (
	"github.com/petrel-rpc/petrel/idl/thrift"
)

// genService writes the argument and result structs of every function of
// svc and its method table, <Service>ServiceInfo, which lists inherited
// functions too (their structs live with the base service).
func (fg *fileGen) genService(svc *thrift.Service) {
	for _, fn := range svc.Functions {
		ss := fg.g.serviceStructs(fn)
		fg.genStruct(ss.args)
		if ss.result != nil {
			fg.genStruct(ss.result)
		}
	}
	info := fg.g.names[key{svc, "ServiceInfo"}]
	fg.doc(svc.Doc)
	if svc.Doc != "" {
		fg.p("//")
	}
	fg.p("// %s describes service %s for the RPC runtime: its methods (inherited", info, svc.Name)
	fg.p("// ones included) and how to make their argument and result structs.")
	fg.p("var %s = &thrift.ServiceInfo{", info)
	fg.p("Name: %q,", svc.Name)
	if svc.Extends != "" {
		fg.p("Extends: %q,", svc.Extends)
	}
	fg.p("Methods: []thrift.MethodInfo{")
	seen := map[string]bool{}
	for s := svc; s != nil; s = s.Base {
		for _, fn := range s.Functions {
			if seen[fn.Name] {
				continue
			}
			seen[fn.Name] = true
			ss := fg.g.serviceStructs(fn)
			fg.p("{")
			fg.p("Name: %q,", fn.Name)
			if fn.Oneway {
				fg.p("Oneway: true,")
			}
			fg.p("NewArgs: func() thrift.FastCodec { return %s() },", fg.newFunc(ss.args))
			if ss.result != nil {
				fg.p("NewResult: func() thrift.FastCodec { return %s() },", fg.newFunc(ss.result))
			}
			fg.p("},")
		}
		if s.Base == s {
			break
		}
	}
	fg.p("},")
	fg.p("}")
	fg.p("")
}
