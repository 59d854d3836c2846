package web

import (
	"bytes"
	"context"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/views"
)

// liveHub tells the open pages of a handoff (the review screen, its plans'
// pages, its share pages) that it changed, and who has them open. A change
// is a signal, not content: each page fetches what it shows again with
// its own rights (static/live.js), keeping what is being typed.
type liveHub struct {
	mu     sync.Mutex
	topics map[string]*liveTopic // by handoff ID
	nextID uint64
	closed chan struct{} // closed at shutdown: streams end
	once   sync.Once
}

// liveTopic is one handoff's listeners.
type liveTopic struct {
	seq     uint64            // grows with every change
	viewers map[uint64]string // connection → name shown to others
	changed chan struct{}     // closed and replaced on every change or join/leave
}

func newLiveHub() *liveHub {
	return &liveHub{topics: map[string]*liveTopic{}, closed: make(chan struct{})}
}

func (t *liveTopic) wake() {
	close(t.changed)
	t.changed = make(chan struct{})
}

// publish tells handoffID's pages that it changed. It costs nothing when
// nobody watches.
func (h *liveHub) publish(handoffID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if t := h.topics[handoffID]; t != nil {
		t.seq++
		t.wake()
	}
}

// publishAll tells every watched handoff's pages to look again.
func (h *liveHub) publishAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, t := range h.topics {
		t.seq++
		t.wake()
	}
}

// watched reports whether anyone follows any handoff.
func (h *liveHub) watched() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.topics) > 0
}

// join adds a viewer to handoffID's pages until leave.
func (h *liveHub) join(handoffID, name string) uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.topics[handoffID]
	if t == nil {
		t = &liveTopic{viewers: map[uint64]string{}, changed: make(chan struct{})}
		h.topics[handoffID] = t
	}
	h.nextID++
	t.viewers[h.nextID] = name
	t.wake()
	return h.nextID
}

// leave removes a viewer; the topic goes with its last one.
func (h *liveHub) leave(handoffID string, id uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.topics[handoffID]
	if t == nil {
		return
	}
	delete(t.viewers, id)
	t.wake()
	if len(t.viewers) == 0 {
		delete(h.topics, handoffID)
	}
}

// state returns handoffID's change count, the names of its viewers other
// than self (sorted, "Ana ×2" for two pages), and a channel closed on the
// next change.
func (h *liveHub) state(handoffID string, self uint64) (seq uint64, others []string, changed <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.topics[handoffID]
	if t == nil {
		return 0, nil, nil
	}
	n := map[string]int{}
	for id, name := range t.viewers {
		if id != self {
			n[name]++
		}
	}
	for name, k := range n {
		if k > 1 {
			name += " ×" + strconv.Itoa(k)
		}
		others = append(others, name)
	}
	sort.Strings(others)
	return t.seq, others, t.changed
}

// close ends every stream (server shutdown).
func (h *liveHub) close() { h.once.Do(func() { close(h.closed) }) }

// streamLive follows handoffID for one page over SSE until the client
// leaves, the server stops, or check (when set) fails after a change: "changed" after every change of the handoff
// (its data the change count), "viewers" with who else is viewing, as
// HTML, whenever that changes.
func (s *Server) streamLive(c echo.Context, handoffID, name string, check func(context.Context) error) error {
	ctx := c.Request().Context()
	sse := startSSE(c)
	id := s.live.join(handoffID, name)
	defer s.live.leave(handoffID, id)
	var lastSeq uint64
	lastViewers := "\x00"
	for {
		seq, others, changed := s.live.state(handoffID, id)
		if seq != lastSeq && check != nil && check(ctx) != nil {
			return nil // the link was revoked or expired: the page hears no more
		}
		if seq != lastSeq {
			if err := sse.send("changed", strconv.FormatUint(seq, 10)); err != nil {
				return nil
			}
			lastSeq = seq
		}
		if v := viewersHTML(ctx, others); v != lastViewers {
			if err := sse.send("viewers", v); err != nil {
				return nil
			}
			lastViewers = v
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil
		case <-s.live.closed:
			return nil
		}
	}
}

func viewersHTML(ctx context.Context, names []string) string {
	var buf bytes.Buffer
	if err := views.Viewers(names).Render(ctx, &buf); err != nil {
		return ""
	}
	return strings.TrimSpace(buf.String())
}

// handleLive serves GET /h/:id/live: the handoff's changes and viewers
// for its review screen and plan pages.
func (s *Server) handleLive(c echo.Context) error {
	ctx := c.Request().Context()
	h, err := s.findHandoff(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	return s.streamLive(c, h.ID, actor(ctx).Name, nil)
}

// announceChanges tells a handoff's open pages that it changed after a
// successful write to one of its routes (items, freeze, plans, comments,
// reviews), whichever handler made it.
func (s *Server) announceChanges(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := next(c)
		// Pages on other instances may watch when this one has none.
		if err != nil || c.Request().Method == "GET" || c.Response().Status >= 400 || (s.liveBus == nil && !s.live.watched()) {
			return err
		}
		if id := s.handoffOfRoute(c); id != "" {
			s.announce(id)
		}
		return nil
	}
}

// handoffOfRoute finds the handoff a route is about, from its parameters.
func (s *Server) handoffOfRoute(c echo.Context) string {
	ctx := c.Request().Context()
	p := c.Path()
	switch {
	case strings.HasPrefix(p, "/h/:id"), strings.HasPrefix(p, "/api/v1/handoffs/:id"):
		return c.Param("id")
	case strings.HasPrefix(p, "/p/:id"), strings.HasPrefix(p, "/api/v1/plans/:id"):
		if plan, err := s.db.FindPlanByID(ctx, c.Param("id")); err == nil {
			return plan.HandoffID
		}
	case strings.HasPrefix(p, "/api/v1/comments/:id"):
		if cm, err := s.db.FindCommentByID(ctx, c.Param("id")); err == nil {
			return cm.HandoffID
		}
	case strings.HasPrefix(p, "/t/:id/messages/:mid/"):
		if st, err := s.db.FindReadyState(ctx, c.Param("id")); err == nil {
			return st.HandoffID
		}
	}
	return ""
}

// publishPlanDone is called when a plan run ends, so that the pages of its
// handoff show the new version.
func (s *Server) publishPlanDone(plan *store.Plan) {
	if plan != nil {
		s.announce(plan.HandoffID)
	}
}
