package web

import (
	"fmt"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/store"
)

// Workspace scoping. Every object a request names by id is loaded through
// one of the xxxIn helpers below, which answer an object of another
// workspace exactly as a missing one (ErrNotFound, same message), and
// every list is filtered by workspaceOf. Routes with an object id in their
// path also run the matching inXxx guard, so a handler that only passes
// the id on to the store (a pin, a stop) is scoped too.

// errNoWorkspace answers a signed-in person who belongs to no workspace.
var errNoWorkspace = &store.Error{Code: store.EFORBIDDEN, Message: "You are not a member of any workspace. Ask an owner for an invite."}

// workspaceOf returns the workspace the request acts in. It never returns
// "" (which the store reads as "the default workspace").
func workspaceOf(c echo.Context) (string, error) {
	p := principalOf(c)
	if p == nil {
		return "", errUnauthorizedAPI("Sign in first.")
	}
	if p.WorkspaceID == "" || p.Role == "" {
		return "", errNoWorkspace
	}
	return p.WorkspaceID, nil
}

// notInWorkspace is the error for an object of another workspace: the
// store's own answer for a missing one.
func notInWorkspace(kind, id string) error {
	return fmt.Errorf("%s %s: %w", kind, id, store.ErrNotFound)
}

// threadIn returns thread id if it belongs to the request's workspace.
func (s *Server) threadIn(c echo.Context, id string) (*store.Thread, error) {
	ws, err := workspaceOf(c)
	if err != nil {
		return nil, err
	}
	t, err := s.db.FindThreadByID(c.Request().Context(), id)
	if err != nil {
		return nil, err
	}
	if t.WorkspaceID != ws {
		return nil, notInWorkspace("thread", id)
	}
	return t, nil
}

// threadPage is what the brainstorm page reads with its thread.
type threadPage struct {
	thread *store.Thread
	ready  store.ReadyState
}

// threadPageIn is threadIn for the brainstorm page: the thread with its
// ready state, in one read.
func (s *Server) threadPageIn(c echo.Context, id string) (threadPage, error) {
	ws, err := workspaceOf(c)
	if err != nil {
		return threadPage{}, err
	}
	t, ready, err := s.db.FindThreadWithReadyState(c.Request().Context(), id)
	if err != nil {
		return threadPage{}, err
	}
	if t.WorkspaceID != ws {
		return threadPage{}, notInWorkspace("thread", id)
	}
	return threadPage{t, ready}, nil
}

// handoffIn returns handoff id if it belongs to the request's workspace.
func (s *Server) handoffIn(c echo.Context, id string) (*store.Handoff, error) {
	ws, err := workspaceOf(c)
	if err != nil {
		return nil, err
	}
	h, err := s.db.FindHandoffByID(c.Request().Context(), id)
	if err != nil {
		return nil, err
	}
	if h.WorkspaceID != ws {
		return nil, notInWorkspace("handoff", id)
	}
	return h, nil
}

// planIn returns plan id if its handoff belongs to the request's workspace.
func (s *Server) planIn(c echo.Context, id string) (*store.Plan, error) {
	if _, err := workspaceOf(c); err != nil {
		return nil, err
	}
	plan, err := s.db.FindPlanByID(c.Request().Context(), id)
	if err != nil {
		return nil, err
	}
	if _, err := s.handoffIn(c, plan.HandoffID); err != nil {
		return nil, notInWorkspace("plan", id)
	}
	return plan, nil
}

// snapshotIn returns snapshot id if its handoff belongs to the request's workspace.
func (s *Server) snapshotIn(c echo.Context, id string) (*store.Snapshot, error) {
	if _, err := workspaceOf(c); err != nil {
		return nil, err
	}
	sn, err := s.db.FindSnapshotByID(c.Request().Context(), id)
	if err != nil {
		return nil, err
	}
	if _, err := s.handoffIn(c, sn.HandoffID); err != nil {
		return nil, notInWorkspace("snapshot", id)
	}
	return sn, nil
}

// decisionIn returns decision record id if it belongs to the request's workspace.
func (s *Server) decisionIn(c echo.Context, id string) (*store.DecisionRecord, error) {
	ws, err := workspaceOf(c)
	if err != nil {
		return nil, err
	}
	d, err := s.db.FindDecisionRecordByID(c.Request().Context(), id)
	if err != nil {
		return nil, err
	}
	if d.WorkspaceID != ws {
		return nil, notInWorkspace("decision record", id)
	}
	return d, nil
}

// guard turns a check of the :id path parameter into route middleware.
func guard[T any](check func(echo.Context, string) (T, error)) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			id := c.Param("id")
			v, err := check(c, id)
			if err != nil {
				return err
			}
			c.Set(guardedKey, guardedObject{id: id, v: v})
			return next(c)
		}
	}
}

// guardedKey is where a guard keeps what it loaded, for its handler.
const guardedKey = "baton.guarded"

// guardedObject is what a guard loaded for the id in the route.
type guardedObject struct {
	id string
	v  any
}

// guarded returns what the route's guard loaded for id earlier in this
// request, or loads it with check when no guard did. Only handlers that
// change nothing before they use it may call it (page views): one that
// writes must load the object again to show its change.
func guarded[T any](c echo.Context, id string, check func(echo.Context, string) (T, error)) (T, error) {
	if g, ok := c.Get(guardedKey).(guardedObject); ok && g.id == id {
		if v, ok := g.v.(T); ok {
			return v, nil
		}
	}
	return check(c, id)
}

// inThread, inHandoff, inPlan, inSnapshot and inDecision guard routes
// whose :id names a thread, handoff, plan, snapshot or decision record:
// one of another workspace answers 404 before the handler runs.
func (s *Server) inThread(next echo.HandlerFunc) echo.HandlerFunc   { return guard(s.threadIn)(next) }
func (s *Server) inHandoff(next echo.HandlerFunc) echo.HandlerFunc  { return guard(s.handoffIn)(next) }
func (s *Server) inPlan(next echo.HandlerFunc) echo.HandlerFunc     { return guard(s.planIn)(next) }
func (s *Server) inSnapshot(next echo.HandlerFunc) echo.HandlerFunc { return guard(s.snapshotIn)(next) }
func (s *Server) inDecision(next echo.HandlerFunc) echo.HandlerFunc { return guard(s.decisionIn)(next) }

// inThreadPage is inThread for the brainstorm page, whose handler takes
// the thread and its ready state from it (guarded).
func (s *Server) inThreadPage(next echo.HandlerFunc) echo.HandlerFunc {
	return guard(s.threadPageIn)(next)
}
