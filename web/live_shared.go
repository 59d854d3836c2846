package web

import (
	"context"
	"time"
)

// On a database several instances share, a change made through one
// instance must reach the review pages open on the others: every instance
// announces changes on the database's notification channel (LISTEN/NOTIFY
// on PostgreSQL) and relays what it hears, its own included, to its pages.

// liveChannel carries the IDs of handoffs that changed.
const liveChannel = "live"

// liveBus is what the relay needs of a shared database.
type liveBus interface {
	Notify(ctx context.Context, channel, payload string) error
	Listen(ctx context.Context, channel string) (<-chan string, error)
}

// shareLive makes the live hub announce changes through bus and relays
// every instance's announcements to this one's pages until shutdown.
func (s *Server) shareLive(bus liveBus) {
	ctx, cancel := context.WithCancel(context.Background())
	notes, err := bus.Listen(ctx, liveChannel)
	if err != nil {
		cancel()
		s.log.Error("live review across instances is off: cannot listen", "err", err)
		return
	}
	s.liveBus = bus
	s.background.Add(1)
	go func() {
		defer s.background.Done()
		defer cancel()
		for {
			select {
			case id, ok := <-notes:
				if !ok {
					return
				}
				if id == "" { // the listener reconnected: changes may have been missed
					s.live.publishAll()
					continue
				}
				s.live.publish(id)
			case <-s.live.closed:
				return
			}
		}
	}()
}

// announce tells the pages of handoffID, on every instance, that it
// changed.
func (s *Server) announce(handoffID string) {
	if s.liveBus == nil {
		s.live.publish(handoffID)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.liveBus.Notify(ctx, liveChannel, handoffID); err != nil {
		s.log.Warn("announce a change to other instances", "handoff", handoffID, "err", err)
		s.live.publish(handoffID) // this instance's pages at least
	}
}
