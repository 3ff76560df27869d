// Package handler implements service Hello of the hello example.
package handler

import (
	"context"
	"sync"
	"unicode/utf8"

	"github.com/petrel-rpc/petrel/examples/hello/gen/hello"
)

// MaxNameLen is the longest name Greet accepts, in bytes.
const MaxNameLen = 64

// MaxEvents is how many of the latest Notify events a Handler keeps.
const MaxEvents = 100

// Handler implements hello.Hello. The zero value is ready to use.
type Handler struct {
	mu     sync.Mutex
	events []string // the latest MaxEvents; guarded by mu
	count  int      // events recorded in all; guarded by mu
	seen   chan struct{}
}

var _ hello.Hello = (*Handler)(nil)

// Echo returns the request's action and message.
func (h *Handler) Echo(ctx context.Context, req *hello.EchoRequest) (*hello.EchoResponse, error) {
	return &hello.EchoResponse{Action: req.GetAction(), Msg: req.GetMsg()}, nil
}

// Greet returns "hello, NAME"; an empty name or one longer than MaxNameLen
// is the declared exception InvalidName.
func (h *Handler) Greet(ctx context.Context, name string) (string, error) {
	switch {
	case name == "":
		return "", &hello.InvalidName{Name: name, Reason: "the name is empty"}
	case len(name) > MaxNameLen:
		// Cut between characters: a Thrift string is UTF-8.
		cut := MaxNameLen
		for cut > 0 && !utf8.RuneStart(name[cut]) {
			cut--
		}
		return "", &hello.InvalidName{Name: name[:cut] + "...", Reason: "the name is longer than 64 bytes"}
	}
	return "hello, " + name, nil
}

// Notify records event (see Events).
func (h *Handler) Notify(ctx context.Context, event string) error {
	h.mu.Lock()
	if len(h.events) == MaxEvents {
		h.events = append(h.events[:0], h.events[1:]...)
	}
	h.events = append(h.events, event)
	h.count++
	if h.seen != nil {
		close(h.seen)
		h.seen = nil
	}
	h.mu.Unlock()
	return nil
}

// Events returns the latest events Notify recorded (at most MaxEvents),
// oldest first.
func (h *Handler) Events() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.events...)
}

// WaitEvents waits until Notify has recorded at least n events in all or
// ctx ends, and returns the events kept (see Events).
func (h *Handler) WaitEvents(ctx context.Context, n int) ([]string, error) {
	for {
		h.mu.Lock()
		if h.count >= n {
			ev := append([]string(nil), h.events...)
			h.mu.Unlock()
			return ev, nil
		}
		if h.seen == nil {
			h.seen = make(chan struct{})
		}
		seen := h.seen
		h.mu.Unlock()
		select {
		case <-seen:
		case <-ctx.Done():
			return h.Events(), ctx.Err()
		}
	}
}
