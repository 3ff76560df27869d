package thrift_test

import (
	"strings"
	"testing"
)

// A broken method name in a message header is reported as the message name,
// not as some "string": the reader of "string of 16 bytes declared but only 0
// bytes left" cannot tell that the header, not a field, was bad.
func TestMessageNameErrorsSayMessageName(t *testing.T) {
	cases := []struct {
		name, want string
		read       func() error
	}{
		{"binary strict cut", "message name of 16 bytes declared but only 1 bytes left", func() error {
			_, _, _, _, err := bp.ReadMessageBegin([]byte{0x80, 0x01, 0, 1, 0, 0, 0, 16, 'p'})
			return err
		}},
		{"binary strict negative", "message name size -1 is negative", func() error {
			_, _, _, _, err := bp.ReadMessageBegin([]byte{0x80, 0x01, 0, 1, 0xff, 0xff, 0xff, 0xff})
			return err
		}},
		{"binary strict no length", "message name length needs 4 bytes", func() error {
			_, _, _, _, err := bp.ReadMessageBegin([]byte{0x80, 0x01, 0, 1, 0})
			return err
		}},
		{"binary non-strict cut", "message name of 16 bytes declared but only 1 bytes left", func() error {
			_, _, _, _, err := bp.ReadMessageBegin([]byte{0, 0, 0, 16, 'p'})
			return err
		}},
		{"compact cut", "message name of 16 bytes declared but only 0 bytes left", func() error {
			_, _, _, _, err := cp.ReadMessageBegin([]byte{0x82, 0x21, 0x01, 0x10})
			return err
		}},
		{"compact length cut", "message name length varint cut off", func() error {
			_, _, _, _, err := cp.ReadMessageBegin([]byte{0x82, 0x21, 0x01, 0xff})
			return err
		}},
	}
	for _, c := range cases {
		err := c.read()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}
}
