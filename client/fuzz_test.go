package client_test

import (
	"errors"
	"testing"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/codec/thrift"
	"github.com/petrel-rpc/petrel/rpcerr"
	"github.com/petrel-rpc/petrel/transport"
)

// FuzzDecodeReply feeds the reply decoder arbitrary message bodies, message
// types and business-status headers: it must return a classified error or
// nil, never panic.
func FuzzDecodeReply(f *testing.F) {
	ok := &echoResult{Success: []byte("hi"), HasSuccess: true}
	f.Add(int32(thrift.REPLY), thrift.Marshal(ok), "", "", "")
	f.Add(int32(thrift.EXCEPTION), thrift.Marshal(thrift.NewApplicationException(6, "boom")), "", "", "")
	f.Add(int32(thrift.REPLY), thrift.Marshal(&echoResult{Err: &oops{Why: "x"}}), "1001", "no", `{"a":"b"}`)
	f.Add(int32(thrift.REPLY), []byte{0x0b, 0, 0, 0xff, 0xff, 0xff, 0xff}, "x", "", "{")
	f.Add(int32(7), []byte{}, "", "", "")
	f.Fuzz(func(t *testing.T, typ int32, body []byte, status, msg, extra string) {
		info := map[string]string{}
		if status != "" {
			info[transport.StrKeyBizStatus] = status
			info[transport.StrKeyBizMessage] = msg
			info[transport.StrKeyBizExtra] = extra
		}
		err := client.DecodeReply(thrift.MessageType(typ), body, new(echoResult), info)
		if err == nil {
			return
		}
		var biz *rpcerr.BizStatusError
		switch code := rpcerr.CodeOf(err); code {
		case rpcerr.Protocol, rpcerr.Application:
		case rpcerr.Business:
			if !errors.As(err, &biz) || biz.StatusCode == 0 {
				t.Fatalf("business error without a status: %v", err)
			}
		default:
			t.Fatalf("unclassified error %v (code %v)", err, code)
		}
	})
}
