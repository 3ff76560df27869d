//go:build linux && cgo

package main

/*
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

// The floor: one thread, level-triggered epoll, each readable connection
// read once into its buffer and the bytes written straight back (the echo
// protocol needs nothing else: messages are answered in order, byte for
// byte). A write the socket cannot take whole waits for EPOLLOUT.

#define CE_BUF 65536
#define CE_EVENTS 256

typedef struct {
	int fd;
	ssize_t off, len; // bytes of buf still to write
	char buf[CE_BUF];
} ce_conn;

static char ce_listener, ce_stopper; // tags in the epoll data

// ce_write writes what is pending; -1 when the connection failed.
static int ce_write(ce_conn *c) {
	while (c->len > 0) {
		ssize_t w = write(c->fd, c->buf + c->off, c->len);
		if (w < 0) {
			if (errno == EINTR) continue;
			return errno == EAGAIN ? 0 : -1;
		}
		c->off += w;
		c->len -= w;
	}
	return 0;
}

static void ce_close(int ep, ce_conn *c) {
	epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c);
}

static int ce_watch(int ep, int op, int fd, uint32_t events, void *p) {
	struct epoll_event ev;
	ev.events = events;
	ev.data.ptr = p;
	return epoll_ctl(ep, op, fd, &ev);
}

// ce_serve serves the listening socket lfd until stopfd is readable; it
// returns 0 or an errno.
static int ce_serve(int lfd, int stopfd) {
	int ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0) return errno;
	if (fcntl(lfd, F_SETFL, fcntl(lfd, F_GETFL) | O_NONBLOCK) < 0 ||
	    ce_watch(ep, EPOLL_CTL_ADD, lfd, EPOLLIN, &ce_listener) < 0 ||
	    ce_watch(ep, EPOLL_CTL_ADD, stopfd, EPOLLIN, &ce_stopper) < 0) {
		int e = errno;
		close(ep);
		return e;
	}
	struct epoll_event evs[CE_EVENTS];
	for (;;) {
		int n = epoll_wait(ep, evs, CE_EVENTS, -1);
		if (n < 0) {
			if (errno == EINTR) continue;
			int e = errno;
			close(ep);
			return e;
		}
		for (int i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;
			if (p == &ce_stopper) {
				close(ep);
				return 0;
			}
			if (p == &ce_listener) {
				int fd;
				while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
					int one = 1;
					setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
					ce_conn *c = malloc(sizeof *c);
					if (c == NULL) {
						close(fd);
						continue;
					}
					c->fd = fd;
					c->off = c->len = 0;
					if (ce_watch(ep, EPOLL_CTL_ADD, fd, EPOLLIN | EPOLLRDHUP, c) < 0) {
						close(fd);
						free(c);
					}
				}
				continue;
			}
			ce_conn *c = p;
			if (c->len == 0) {
				ssize_t r = read(c->fd, c->buf, CE_BUF);
				if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
				if (r <= 0) {
					ce_close(ep, c);
					continue;
				}
				c->off = 0;
				c->len = r;
			}
			if (ce_write(c) < 0) {
				ce_close(ep, c);
				continue;
			}
			// Read again once the echo is out; wait to write meanwhile.
			uint32_t want = c->len > 0 ? EPOLLOUT : EPOLLIN | EPOLLRDHUP;
			if ((c->len > 0 || (evs[i].events & EPOLLOUT)) && ce_watch(ep, EPOLL_CTL_MOD, c->fd, want, c) < 0) {
				ce_close(ep, c);
			}
		}
	}
}

static int ce_eventfd(void) { return eventfd(0, EFD_CLOEXEC); }
*/
import "C"

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"runtime"
	"syscall"
)

// The cepoll server is the floor the figures refer to: a minimal C
// epoll echo, one thread, no framework. It needs cgo (a C compiler); a
// netbench built without cgo lacks it and netcompare.sh skips it.
func init() {
	register("cepoll", newCEpollServer)
}

type cepollServer struct {
	stop int // an eventfd the C loop watches: written by Shutdown
}

func newCEpollServer(int) (echoServer, error) {
	fd, err := C.ce_eventfd()
	if fd < 0 {
		return nil, fmt.Errorf("cepoll: eventfd: %w", err)
	}
	return &cepollServer{stop: int(fd)}, nil
}

// Serve runs the C loop on this goroutine's thread until Shutdown.
func (s *cepollServer) Serve(ln net.Listener) error {
	tl, ok := ln.(*net.TCPListener)
	if !ok {
		return fmt.Errorf("cepoll: serves a *net.TCPListener, not %T", ln)
	}
	f, err := tl.File() // a dup of the listening fd for the C loop
	if err != nil {
		return fmt.Errorf("cepoll: %w", err)
	}
	defer f.Close()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if e := C.ce_serve(C.int(f.Fd()), C.int(s.stop)); e != 0 {
		return fmt.Errorf("cepoll: %w", syscall.Errno(e))
	}
	return nil
}

// Shutdown tells the C loop to return.
func (s *cepollServer) Shutdown(context.Context) error {
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	if _, err := syscall.Write(s.stop, one[:]); err != nil {
		return fmt.Errorf("cepoll: waking the loop: %w", err)
	}
	return nil
}
