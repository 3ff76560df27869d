package server_test

import (
	"net"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/server"
	"github.com/petrel-rpc/petrel/server/internal/echotest"
	"github.com/petrel-rpc/petrel/transport"
)

// TestIDLServiceNameIsStrict: a TTHeader request whose IDL service name
// ("isn") names a registered service is answered by that service only, as a
// Kitex server does: when it lacks the method the request is refused with
// UNKNOWN_METHOD naming the service and the method, not run by another
// service that has a method of that name. Requests without "isn", with an
// unknown one, or with a multiplexed name are routed as before.
func TestIDLServiceNameIsStrict(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := server.New()
	// Notifier: the Echo service without its echo method.
	notifier := *echotest.EchoServiceInfo
	notifier.Name = "Notifier"
	notifier.Methods = nil
	for _, m := range echotest.EchoServiceInfo.Methods {
		if m.Name != "echo" {
			notifier.Methods = append(notifier.Methods, m)
		}
	}
	if len(notifier.Methods) == len(echotest.EchoServiceInfo.Methods) {
		t.Fatal("the Echo service has no method echo")
	}
	if err := s.RegisterService(&notifier, &fixedHandler{}); err != nil {
		t.Fatal(err)
	}
	serve(t, s, ln, &fixedHandler{resp: &echotest.Response{Msg: "from Echo"}})
	c := dial(t, ln.Addr().String(), transport.TTHeader)

	h := &transport.Header{}
	h.SetStr(transport.StrKeyIDLService, "Notifier")
	res, rep := c.call(1, "", "", h)
	want := `service "Notifier" (the request's IDL service name) has no method "echo"`
	if rep.ex == nil || rep.ex.Type != thrift.ExceptionUnknownMethod || !strings.Contains(rep.ex.Message, want) {
		t.Errorf("isn Notifier, method echo: answered %q, exception %+v; want UNKNOWN_METHOD saying %s", res.Success.GetMsg(), rep.ex, want)
	}

	for i, isn := range []string{"Echo", "", "NotRegistered"} {
		h := &transport.Header{}
		if isn != "" {
			h.SetStr(transport.StrKeyIDLService, isn)
		}
		if res, rep := c.call(int32(2+i), "", "", h); rep.ex != nil || res.Success.GetMsg() != "from Echo" {
			t.Errorf("isn %q: %q %+v, want the reply of Echo", isn, res.Success.GetMsg(), rep.ex)
		}
	}

	// A multiplexed name chooses its service, also beside "isn".
	h = &transport.Header{}
	h.SetStr(transport.StrKeyIDLService, "Notifier")
	if err := c.send("Echo:echo", thrift.CALL, 9, &echotest.EchoEchoArgs{Req: &echotest.Request{}}, h); err != nil {
		t.Fatal(err)
	}
	res = new(echotest.EchoEchoResult)
	if rep, err := c.recv(res); err != nil || rep.ex != nil || res.Success.GetMsg() != "from Echo" {
		t.Errorf("Echo:echo with isn Notifier: %v %q %+v, want the reply of Echo", err, res.Success.GetMsg(), rep.ex)
	}
}
