//go:build linux || darwin

package thrift_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/idl/thrift"
)

// TestIncludeOfSpecialFile checks that an include naming a device or a
// named pipe is refused, naming the include and what the file is, without
// reading it: /dev/zero never ends (reading it takes all memory) and a pipe
// without a writer blocks its reader forever.
func TestIncludeOfSpecialFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.thrift")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("cannot make a named pipe: %v", err)
	}
	for _, tc := range []struct{ inc, want string }{
		{"pipe.thrift", `cannot read include "pipe.thrift": ` + fifo + ` is a named pipe, not a regular file`},
		{os.DevNull, `cannot read include "` + os.DevNull + `": ` + os.DevNull + ` is a device, not a regular file`},
	} {
		main := filepath.Join(dir, "main.thrift")
		if err := os.WriteFile(main, []byte("include \""+tc.inc+"\"\nstruct S {}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := thrift.ParseFile(main, thrift.ParseOptions{})
			done <- err
		}()
		timer := time.NewTimer(5 * time.Second)
		var err error
		select {
		case err = <-done:
			timer.Stop()
		case <-timer.C:
			// Unblock the reader of the pipe so that the goroutine ends.
			if w, werr := os.OpenFile(fifo, os.O_WRONLY, 0); werr == nil {
				w.Close()
			}
			<-done
			t.Fatalf("include %q: ParseFile still reading after 5s", tc.inc)
		}
		want := main + ":1:1: " + tc.want
		if err == nil || err.Error() != want {
			t.Errorf("include %q: error = %v, want %s", tc.inc, err, want)
		}
	}
}

// TestMainFileSpecialFile: the same for the main file (petrel gen
// /dev/zero read until it ran out of memory).
func TestMainFileSpecialFile(t *testing.T) {
	_, err := thrift.ParseFile("/dev/zero", thrift.ParseOptions{})
	want := "/dev/zero: cannot read IDL file: /dev/zero is a device, not a regular file"
	if err == nil || err.Error() != want {
		t.Errorf("ParseFile(/dev/zero): %v, want %s", err, want)
	}
}
