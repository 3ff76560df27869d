package server

import "time"

// Draining reports whether Stop has begun (for tests).
func (s *Server) Draining() bool { return s.draining.Load() }

// LastPanic returns the last panic outside a handler, with its stack.
func (s *Server) LastPanic() string {
	v, _ := s.lastPanic.Load().(string)
	return v
}

// TimeRejections makes s tell f, for each request its limits reject, the
// time from reading the request to its rejection written. Call it before
// serving.
func (s *Server) TimeRejections(f func(time.Duration)) { s.rejectTimed = f }

// ReadTimeout returns the bound on reading one request (WithReadTimeout).
func (s *Server) ReadTimeout() time.Duration { return s.cfg.readTimeout }
