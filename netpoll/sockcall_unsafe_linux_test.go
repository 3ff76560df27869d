//go:build linux

package netpoll

import (
	"net"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BenchmarkSocketCalls sends 1 KiB over a loopback TCP pair and receives it
// with the system calls readv and writev make for one segment (recvfrom and
// sendto) against read and write, which pass through the file layer first.
// Run it pinned to one CPU (taskset -c 0) for steady figures. unsafe turns
// the buffers into the system calls' pointer arguments, as readv and writev
// do; each buffer is live for the whole call.
func BenchmarkSocketCalls(b *testing.B) {
	for _, bc := range []struct {
		name       string
		send, recv func(fd int, p []byte) (int, syscall.Errno)
	}{
		{"sendto-recvfrom", func(fd int, p []byte) (int, syscall.Errno) {
			return writev(fd, [][]byte{p}, nil)
		}, func(fd int, p []byte) (int, syscall.Errno) {
			return readv(fd, [][]byte{p}, nil)
		}},
		{"write-read", func(fd int, p []byte) (int, syscall.Errno) {
			r, _, errno := syscall.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			return int(r), errno
		}, func(fd int, p []byte) (int, syscall.Errno) {
			r, _, errno := syscall.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			return int(r), errno
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			a, z := loopbackFDs(b)
			out, in := make([]byte, 1024), make([]byte, 64<<10)
			b.SetBytes(int64(len(out)))
			b.ReportAllocs()
			for b.Loop() {
				if n, errno := bc.send(a, out); n != len(out) {
					b.Fatalf("sent %d of %d bytes: %v", n, len(out), errno)
				}
				if n, errno := bc.recv(z, in); n != len(out) {
					b.Fatalf("received %d of %d bytes: %v", n, len(out), errno)
				}
			}
		})
	}
}

// loopbackFDs returns the non-blocking fds of both ends of a loopback TCP
// connection, closed when b ends.
func loopbackFDs(b *testing.B) (int, int) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		c.Close()
		b.Fatal(err)
	}
	var fds [2]int
	for i, conn := range []net.Conn{c, s} {
		f, err := conn.(*net.TCPConn).File() // a blocking duplicate
		conn.Close()
		if err != nil {
			b.Fatal(err)
		}
		fds[i], err = unix.Dup(int(f.Fd()))
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		fd := fds[i]
		b.Cleanup(func() { unix.Close(fd) })
		if err := unix.SetNonblock(fd, true); err != nil {
			b.Fatal(err)
		}
	}
	return fds[0], fds[1]
}
