package web

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/store"
)

// errStopped is the cancel cause when a person presses Stop.
var errStopped = errors.New("stopped by the user")

// errShutdown is the cancel cause when the server shuts down.
var errShutdown = errors.New("server shutting down")

// replyRuns tracks the replies being generated, one per user message, so
// that a second request for the same reply waits instead of starting
// another model call, and Stop can reach a running one.
type replyRuns struct {
	mu     sync.Mutex
	runs   map[string]*replyRun
	wg     sync.WaitGroup
	closed bool // set by stopAll: runs start cancelled from then on
}

type replyRun struct {
	cancel context.CancelCauseFunc
	done   chan struct{}
}

func newReplyRuns() *replyRuns { return &replyRuns{runs: make(map[string]*replyRun)} }

// start registers a run for key. If one is already running it returns that
// run and false; the caller should wait on its done channel.
func (r *replyRuns) start(ctx context.Context, key string) (context.Context, *replyRun, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if run, ok := r.runs[key]; ok {
		return ctx, run, false
	}
	ctx, cancel := context.WithCancelCause(ctx)
	if r.closed {
		cancel(errShutdown)
	}
	run := &replyRun{cancel: cancel, done: make(chan struct{})}
	r.runs[key] = run
	r.wg.Add(1)
	return ctx, run, true
}

func (r *replyRuns) finish(key string, run *replyRun) {
	r.mu.Lock()
	delete(r.runs, key)
	r.mu.Unlock()
	run.cancel(nil)
	close(run.done)
	r.wg.Done()
}

// stop cancels the run for key and reports whether there was one.
func (r *replyRuns) stop(key string, cause error) bool {
	r.mu.Lock()
	run, ok := r.runs[key]
	r.mu.Unlock()
	if ok {
		run.cancel(cause)
	}
	return ok
}

// stopAll cancels every run and waits until they are saved or ctx ends.
func (r *replyRuns) stopAll(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	for _, run := range r.runs {
		run.cancel(errShutdown)
	}
	r.mu.Unlock()
	return wait(ctx, &r.wg)
}

// wait waits for wg, or until ctx ends.
func wait(ctx context.Context, wg *sync.WaitGroup) error {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// replyFor returns the stored reply to a user message, generating it first
// if there is none. emit receives text deltas as they stream. If the same
// reply is being generated elsewhere, replyFor waits for that run. The
// returned message may be complete, stopped or failed; an error means the
// reply could not be produced or stored at all.
func (s *Server) replyFor(ctx context.Context, user *store.Message, emit func(string) error) (*store.Message, error) {
	if existing, err := s.findReply(ctx, user); err == nil || !errors.Is(err, store.ErrNotFound) {
		return existing, err
	}
	runCtx, run, started := s.replies.start(ctx, user.ID)
	if !started {
		select {
		case <-run.done:
			return s.findReply(ctx, user)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	defer s.replies.finish(user.ID, run)
	// Another run may have finished between the lookup and start.
	if existing, err := s.findReply(ctx, user); err == nil || !errors.Is(err, store.ErrNotFound) {
		return existing, err
	}
	return s.generateReply(runCtx, user, emit)
}

func (s *Server) findReply(ctx context.Context, user *store.Message) (*store.Message, error) {
	return s.db.FindReply(ctx, user.ThreadID, user.ID)
}

// generateReply calls the model for the reply to user and stores whatever
// comes of it: the whole reply, the part that arrived before a stop, or
// the failure, so that the person sees what happened and can retry.
func (s *Server) generateReply(ctx context.Context, user *store.Message, emit func(string) error) (*store.Message, error) {
	history, err := s.db.FindMessages(ctx, store.MessageFilter{ThreadID: user.ThreadID})
	if err != nil {
		return nil, err
	}
	var msgs []agent.Message
	for _, m := range history {
		if m.Status == store.StatusFailed || (m.Role == store.RoleAssistant && m.Content == "") {
			continue
		}
		msgs = append(msgs, agent.Text(agent.Role(m.Role), m.Content))
		if m.ID == user.ID {
			break
		}
	}
	req := agent.BrainstormRequest(msgs, s.memoryFor(ctx, s.threadWorkspace(ctx, user.ThreadID), recentText(msgs, 6)))

	var partial strings.Builder
	start := time.Now()
	reply, err := s.provider.Stream(ctx, req, func(d agent.Delta) error {
		partial.WriteString(d.Text)
		if emit == nil {
			return nil
		}
		return emit(d.Text)
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
	// Save even when the request was cancelled: what arrived is kept.
	saveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return s.db.CreateMessage(saveCtx, out)
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

// recentText is the text of the last n messages: what memory is ranked
// against for a brainstorm reply.
func recentText(msgs []agent.Message, n int) string {
	var b strings.Builder
	for _, m := range msgs[max(0, len(msgs)-n):] {
		for _, p := range m.Parts {
			if t, ok := p.(agent.TextPart); ok {
				b.WriteString(t.Text)
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}
