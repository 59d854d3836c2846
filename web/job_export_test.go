package web

// Crash stops this server's job heartbeat, sweeps and job writes, as if its
// process had died, while its jobs go on in memory: other instances then
// see their leases expire. It does nothing on a database of one instance.
func (s *Server) Crash() {
	if s.jobs.shared != nil {
		s.jobs.shared.crash()
	}
}

// JobWrites counts what this server wrote of its jobs' events to a shared
// database: batches, events emitted and rows written (consecutive deltas
// share a row).
func (s *Server) JobWrites() (flushes, events, rows int64) {
	if sh := s.jobs.shared; sh != nil {
		return sh.flushes.Load(), sh.events.Load(), sh.rows.Load()
	}
	return 0, 0, 0
}

// JobsRecovered counts the jobs of dead instances this server recovered.
func (s *Server) JobsRecovered() int64 {
	if sh := s.jobs.shared; sh != nil {
		return sh.recovered.Load()
	}
	return 0
}
