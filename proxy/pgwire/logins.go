package pgwire

// PendingLogins is the number of connections accepted that have not
// finished startup and authentication.
func (s *Server) PendingLogins() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending.Len()
}

// EvictedLogins is the number of pending connections closed so far to make
// room for newer ones (MaxPendingAuth).
func (s *Server) EvictedLogins() uint64 { return s.evictedTotal.Load() }
