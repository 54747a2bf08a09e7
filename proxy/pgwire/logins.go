package pgwire

import (
	"container/list"
	"net"
)

// pendingLogins are the connections accepted and not yet authenticated, in
// two classes each bounded and evicted oldest first within its class:
// silent ones, which have not sent a complete startup packet (at most
// silentFactor times MaxPendingAuth), and started ones, which have (an
// SSLRequest or a StartupMessage; at most MaxPendingAuth).
// A new connection can only evict a silent one, and a connection that
// starts can only evict a started one, so a login under way is never closed
// to make room for a socket that has sent nothing, however many of those
// arrive. The caller holds the server's mutex.
type pendingLogins struct {
	silent, started *list.List
	at              map[net.Conn]*list.Element
}

// silentFactor sizes the silent class: silentFactor times MaxPendingAuth.
// A real client is silent only from accept until its first packet is read
// (well under a millisecond on loopback), but sockets that reconnect as soon
// as they are closed arrive thousands a second; a larger class gives the
// real client that many more arrivals before it is the oldest.
const silentFactor = 32

func newPendingLogins() pendingLogins {
	return pendingLogins{silent: list.New(), started: list.New(), at: map[net.Conn]*list.Element{}}
}

func (p *pendingLogins) len() int { return p.silent.Len() + p.started.Len() }

// add admits a new connection as silent; it returns the connections
// evicted to make room. Before a silent connection is evicted, its socket
// is checked for a startup packet the server has not read yet (the client
// sent it, its goroutine has not run): such a connection is started, not
// silent, and may only make room for another started one.
func (p *pendingLogins) add(nc net.Conn, max int) (evicted []net.Conn) {
	for p.silent.Len() >= silentFactor*max {
		oldest := p.silent.Front().Value.(net.Conn)
		if hasSentStartup(oldest) {
			if e := p.start(oldest, max); e != nil {
				evicted = append(evicted, e)
			}
			continue
		}
		evicted = append(evicted, p.evictOldest(p.silent, max))
	}
	p.at[nc] = p.silent.PushBack(nc)
	return evicted
}

// start moves a silent connection to the started ones; it returns the
// started connection evicted to make room, if any. A connection no longer
// pending (evicted, authenticated) is left alone.
func (p *pendingLogins) start(nc net.Conn, max int) (evicted net.Conn) {
	e, ok := p.at[nc]
	if !ok || p.silent.Remove(e) == nil {
		return nil
	}
	evicted = p.evictOldest(p.started, max)
	p.at[nc] = p.started.PushBack(nc)
	return evicted
}

func (p *pendingLogins) evictOldest(l *list.List, max int) net.Conn {
	if l.Len() < max {
		return nil
	}
	oldest := l.Remove(l.Front()).(net.Conn)
	delete(p.at, oldest)
	return oldest
}

// remove ends a connection's pending period.
func (p *pendingLogins) remove(nc net.Conn) {
	if e, ok := p.at[nc]; ok {
		p.silent.Remove(e)
		p.started.Remove(e)
		delete(p.at, nc)
	}
}

// loginStarted marks a connection as having sent a complete startup packet,
// closing the oldest started one if that class is full.
func (s *Server) loginStarted(nc net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if evicted := s.pending.start(nc, s.opts.MaxPendingAuth); evicted != nil {
		evicted.Close() // its goroutine sees the closed socket and ends
		s.noteEviction()
	}
}

// PendingLogins is the number of connections accepted that have not
// finished startup and authentication.
func (s *Server) PendingLogins() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending.len()
}

// EvictedLogins is the number of pending connections closed so far to make
// room for newer ones (MaxPendingAuth).
func (s *Server) EvictedLogins() uint64 { return s.evictedTotal.Load() }
