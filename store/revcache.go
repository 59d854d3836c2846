package store

import "sync"

// revCache keeps what a page reads on every view, under the revision
// number that the database moves on whenever it changes (migration 0016:
// threads.messages_rev, handoffs.items_rev; 0017: workspaces.decisions_rev and
// blackboard_rev, for agent handoffs with no scope). A view reads the revision
// with the row it reads anyway, or with one cheap statement, and skips
// the expensive read when the kept value has that revision. Keyed by
// revision, an entry is never stale: triggers bump the revision in the
// writing transaction, whichever process writes, so a change shows on the
// first view after it, as it would with no cache.
//
// A value must be read at least as late as its revision (in the same
// statement, or after reading the revision) and is never changed once
// put: get hands out the value itself, so readers copy what they give
// their callers.
type revCache[T any] struct {
	mu      sync.Mutex
	entries map[string]revEntry[T]
	max     int // entries held before starting over
}

type revEntry[T any] struct {
	rev int64
	v   T
}

func newRevCache[T any](max int) *revCache[T] {
	return &revCache[T]{entries: make(map[string]revEntry[T]), max: max}
}

// get returns the value kept for id at revision rev.
func (c *revCache[T]) get(id string, rev int64) (T, bool) {
	c.mu.Lock()
	e, ok := c.entries[id]
	c.mu.Unlock()
	if !ok || e.rev != rev {
		var zero T
		return zero, false
	}
	return e.v, true
}

// put keeps v as id's value at revision rev, unless a later revision is
// kept already (a slower reader must not put back an older value).
func (c *revCache[T]) put(id string, rev int64, v T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[id]; ok && e.rev > rev {
		return
	}
	if _, ok := c.entries[id]; !ok && len(c.entries) >= c.max {
		clear(c.entries)
	}
	c.entries[id] = revEntry[T]{rev, v}
}
