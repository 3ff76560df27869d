package server

// Draining reports whether Stop has begun (for tests).
func (s *Server) Draining() bool { return s.draining.Load() }
