package web

import (
	"context"
	"errors"
	"fmt"
	"html"
	"strings"
	"time"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/store"
)

// replyKey names the job that writes the reply to a user message.
func replyKey(userID string) string { return "reply:" + userID }

// startReply starts writing the reply to user, or returns the job writing
// it already. The job emits "delta" events of escaped text and is
// cancelled as soon as nobody follows it; what arrived is kept as stopped.
func (s *Server) startReply(ctx context.Context, user *store.Message) (*job, error) {
	j, _, err := s.jobs.start(ctx, jobSpec{key: replyKey(user.ID), kind: "reply", orphan: cancelOrphan,
		run: func(ctx context.Context, j *job) error {
			// A job that ended just before this one started may have stored it.
			if _, err := s.findReply(ctx, user); !errors.Is(err, store.ErrNotFound) {
				return err
			}
			_, err := s.generateReply(ctx, user, func(text string) { j.emit("delta", html.EscapeString(text)) })
			return err
		}})
	return j, err
}

// replyFor returns the stored reply to a user message, waiting for it to
// be written first if there is none. The returned message may be complete,
// stopped or failed; an error means the reply could not be produced or
// stored at all.
func (s *Server) replyFor(ctx context.Context, user *store.Message) (*store.Message, error) {
	if existing, err := s.findReply(ctx, user); !errors.Is(err, store.ErrNotFound) {
		return existing, err
	}
	j, err := s.startReply(ctx, user)
	if err != nil {
		return nil, err
	}
	if err := j.wait(ctx); err != nil {
		return nil, err
	}
	return s.findReply(ctx, user)
}

func (s *Server) findReply(ctx context.Context, user *store.Message) (*store.Message, error) {
	return s.db.FindReply(ctx, user.ThreadID, user.ID)
}

// generateReply calls the model for the reply to user and stores whatever
// comes of it: the whole reply, the part that arrived before a stop, or
// the failure, so that the person sees what happened and can retry. emit
// receives the text as it streams.
func (s *Server) generateReply(ctx context.Context, user *store.Message, emit func(string)) (*store.Message, error) {
	history, err := s.db.FindMessages(ctx, store.MessageFilter{ThreadID: user.ThreadID})
	if err != nil {
		return nil, err
	}
	msgs := agent.BrainstormHistory(history, user.ID)
	req := agent.BrainstormRequest(msgs, s.memoryFor(ctx, s.threadWorkspace(ctx, user.ThreadID), agent.BrainstormQuery(msgs)))
	// A thread started by a handoff: its first reply sees the summary.
	handoff := s.pendingThreadSummary(ctx, user.ThreadID)
	if handoff != nil {
		req = agent.WithThreadSummary(req, handoff.SummaryMD)
	}

	var partial strings.Builder
	start := time.Now()
	reply, err := s.provider.Stream(ctx, req, func(d agent.Delta) error {
		partial.WriteString(d.Text)
		emit(d.Text)
		return nil
	})

	out := store.MessageCreate{ThreadID: user.ThreadID, Role: store.RoleAssistant, ReplyTo: user.ID, Model: s.provider.Model()}
	if reply != nil {
		out.InputTokens, out.OutputTokens, out.ResponseID = reply.Usage.InputTokens, reply.Usage.OutputTokens, reply.Usage.ResponseID
		if reply.Model != "" {
			out.Model = reply.Model
		}
	}
	switch {
	case err == nil:
		out.Content, out.Status = reply.Text(), store.StatusComplete
	case ctx.Err() != nil:
		out.Content, out.Status = partial.String(), store.StatusStopped
		s.log.Info("reply stopped", "thread", user.ThreadID, "cause", context.Cause(ctx), "chars", partial.Len())
	default:
		out.Content, out.Status, out.Error = partial.String(), store.StatusFailed, modelFailure(s.provider, err)
		s.log.Warn("reply failed", "thread", user.ThreadID, "provider", s.provider.Name(), "err", err, "duration", time.Since(start))
	}
	// Save even when the job was cancelled: what arrived is kept.
	saveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	saved, err := s.db.CreateMessage(saveCtx, out)
	if err == nil && handoff != nil && saved.Status == store.StatusComplete {
		s.cleanupThreadHandoff(saveCtx, handoff, saved)
	}
	return saved, err
}

// modelFailure says what failed and how to retry, for people.
func modelFailure(p agent.Provider, err error) string {
	if e, ok := agent.AsError(err); ok && e.Message != "" {
		return e.Message
	}
	return fmt.Sprintf("The %s model call failed (%v). Press Retry to try again.", p.Name(), err)
}

// threadWorkspace is the workspace of a thread ("" means the default).
func (s *Server) threadWorkspace(ctx context.Context, threadID string) string {
	t, err := s.db.FindThreadByID(ctx, threadID)
	if err != nil {
		return ""
	}
	return t.WorkspaceID
}
