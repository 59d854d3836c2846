package web

import (
	"context"

	"github.com/baton-dev/baton/store"
)

// errEmptyThread refuses "Ready to plan" on a brainstorm with nothing in
// it: extracting would only leave an empty handoff behind.
var errEmptyThread = &store.ValidationError{Field: "thread",
	Message: "This brainstorm has no messages yet, so there is nothing to plan. Say what you want to build first, then press Ready to plan."}

// checkPlannable returns errEmptyThread (422) unless the thread has a message.
func (s *Server) checkPlannable(ctx context.Context, threadID string) error {
	heads, err := s.db.FindMessageHeads(ctx, threadID)
	if err != nil {
		return err
	}
	if len(heads) == 0 {
		return errEmptyThread
	}
	return nil
}
