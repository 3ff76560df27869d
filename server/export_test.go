package server

// Draining reports whether Stop has begun (for tests).
func (s *Server) Draining() bool { return s.draining.Load() }

// LastPanic returns the last panic outside a handler, with its stack.
func (s *Server) LastPanic() string {
	v, _ := s.lastPanic.Load().(string)
	return v
}
