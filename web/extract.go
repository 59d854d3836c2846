package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/store"
)

// extractJobs tracks running "Ready to plan" extractions, one per handoff
// (the store refuses a second running one). The page watches a job over
// SSE; when the last watcher leaves, the job is cancelled.
type extractJobs struct {
	mu     sync.Mutex
	jobs   map[string]*extractJob // by thread ID
	wg     sync.WaitGroup
	closed bool // set by stopAll: no new jobs
}

type extractJob struct {
	run      *store.ExtractionRun
	cancel   context.CancelCauseFunc
	done     chan struct{}
	mu       sync.Mutex
	progress string
	changed  chan struct{} // closed and replaced on every progress change
	watchers int
	orphaned *time.Timer // cancels the job when nobody watches
	err      error       // how it ended; read after done is closed
}

// errLeft is the cancel cause when the page that started a job went away.
var errLeft = errors.New("the page was closed")

// orphanGrace is how long a job runs with nobody watching before it is
// cancelled: long enough for the page to connect or reconnect.
const orphanGrace = 10 * time.Second

func newExtractJobs() *extractJobs { return &extractJobs{jobs: make(map[string]*extractJob)} }

func (j *extractJob) setProgress(msg string) {
	j.mu.Lock()
	j.progress = msg
	close(j.changed)
	j.changed = make(chan struct{})
	j.mu.Unlock()
}

func (j *extractJob) snapshot() (string, <-chan struct{}) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.progress, j.changed
}

// watch registers a watcher; the returned func unregisters it.
func (j *extractJob) watch() func() {
	j.mu.Lock()
	j.watchers++
	j.orphaned.Stop()
	j.mu.Unlock()
	return func() {
		j.mu.Lock()
		j.watchers--
		if j.watchers == 0 {
			j.orphaned.Reset(2 * time.Second)
		}
		j.mu.Unlock()
	}
}

func (x *extractJobs) find(threadID string) *extractJob {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.jobs[threadID]
}

// stopAll cancels every job and waits for them to end or ctx to expire.
func (x *extractJobs) stopAll(ctx context.Context) error {
	x.mu.Lock()
	x.closed = true
	for _, j := range x.jobs {
		j.cancel(errShutdown)
	}
	x.mu.Unlock()
	return wait(ctx, &x.wg)
}

// errShuttingDown refuses new background work while the server stops.
var errShuttingDown = echo.NewHTTPError(http.StatusServiceUnavailable, "Baton is shutting down. Try again in a moment.")

// startExtraction starts a background extraction for a thread's handoff.
// If one is running already it returns that one. Finding, starting and
// registering happen under one lock, so two clicks at once share one run.
func (s *Server) startExtraction(ctx context.Context, t *store.Thread) (*extractJob, error) {
	x := s.extracts
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil, errShuttingDown
	}
	if j := x.jobs[t.ID]; j != nil {
		return j, nil
	}
	if err := s.checkPlannable(ctx, t.ID); err != nil {
		return nil, err
	}
	h, err := s.db.EnsureHandoff(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	run, err := s.db.StartExtractionRun(ctx, h.ID)
	if err != nil {
		return nil, err
	}
	jobCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	j := &extractJob{run: run, cancel: cancel, done: make(chan struct{}), changed: make(chan struct{}),
		progress: "Starting…"}
	j.orphaned = time.AfterFunc(orphanGrace, func() { cancel(errLeft) })
	x.jobs[t.ID] = j
	x.wg.Add(1)
	go func() {
		defer x.wg.Done()
		defer func() {
			x.mu.Lock()
			delete(x.jobs, t.ID)
			x.mu.Unlock()
			j.orphaned.Stop()
			cancel(nil)
			close(j.done)
		}()
		if j.err = s.extract(jobCtx, run, t, j.setProgress); j.err != nil {
			s.log.Warn("extraction", "thread", t.ID, "run", run.ID, "err", j.err)
		}
	}()
	return j, nil
}

// extract runs one extraction to its end and records how it ended: the
// merge and the run's success in one transaction, or the failure with a
// message for people. The error is for the log.
func (s *Server) extract(ctx context.Context, run *store.ExtractionRun, t *store.Thread, progress func(string)) (err error) {
	endCtx := context.WithoutCancel(ctx)
	defer func() {
		if err == nil {
			return
		}
		status, msg := store.RunFailed, extractionFailure(s.provider, err)
		if ctx.Err() != nil {
			status, msg = store.RunCancelled, "Cancelled: "+context.Cause(ctx).Error()+"."
		}
		if ferr := s.db.FailExtractionRun(endCtx, run.ID, status, msg); ferr != nil {
			err = errors.Join(err, ferr)
		}
	}()

	msgs, err := s.db.FindMessages(ctx, store.MessageFilter{ThreadID: t.ID, Last: agent.MaxTranscriptMessages})
	if err != nil {
		return err
	}
	var transcript []agent.TranscriptMessage
	var ids []string
	for _, m := range msgs {
		if m.Status == store.StatusFailed || m.Content == "" {
			continue
		}
		transcript = append(transcript, agent.TranscriptMessage{Role: agent.Role(m.Role), Content: m.Content})
		ids = append(ids, m.ID)
	}
	if len(transcript) == 0 {
		return &store.ValidationError{Field: "messages", Message: "There is nothing to extract yet: the brainstorm has no messages."}
	}
	progress(fmt.Sprintf("Reading %d messages…", len(transcript)))
	if s.provider.Name() != "offline" {
		progress(fmt.Sprintf("Asking %s to extract decisions, files and risks…", s.provider.Model()))
	}
	ex, err := agent.Extract(ctx, s.provider, transcript)
	if u := ex.Usage; err != nil && u.InputTokens+u.OutputTokens > 0 {
		// A failed answer still cost tokens: they count toward the budget.
		if uerr := s.db.SetExtractionUsage(context.WithoutCancel(ctx), run.ID, u.InputTokens, u.OutputTokens); uerr != nil {
			err = errors.Join(err, uerr)
		}
	}
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	merge := mergeFrom(ex, ids)
	merge.InputTokens, merge.OutputTokens = ex.Usage.InputTokens, ex.Usage.OutputTokens
	progress(fmt.Sprintf("Merging %d decisions, %d files, %d risks…", len(merge.Decisions), len(merge.Files), len(merge.Risks)))
	_, err = s.db.CompleteExtractionRun(ctx, run.ID, merge)
	return err
}

// mergeFrom turns an extraction into a store merge, mapping transcript
// positions to message IDs.
func mergeFrom(ex agent.Extraction, ids []string) store.ExtractionMerge {
	msgIDs := func(sources []int) []string {
		var out []string
		for _, i := range sources {
			if i >= 0 && i < len(ids) {
				out = append(out, ids[i])
			}
		}
		return out
	}
	m := store.ExtractionMerge{Summary: ex.Summary}
	for _, d := range ex.Decisions {
		c := d.Confidence
		m.Decisions = append(m.Decisions, store.DecisionCreate{Content: d.Content, Confidence: &c, MessageIDs: msgIDs(d.Sources)})
	}
	for _, f := range ex.FilesReferenced {
		m.Files = append(m.Files, store.FileRefInput{Path: f.Path, Relevance: store.Level(f.Relevance), Context: f.Context, MessageIDs: msgIDs(f.Sources)})
	}
	for _, r := range ex.Risks {
		m.Risks = append(m.Risks, store.RiskInput{Description: r.Description, Severity: store.Level(r.Severity), Mitigation: r.Mitigation, MessageIDs: msgIDs(r.Sources)})
	}
	return m
}

// extractionFailure says what failed and how to retry, for people.
func extractionFailure(p agent.Provider, err error) string {
	var ve *store.ValidationError
	switch {
	case errors.As(err, &ve):
		return ve.Message
	case errors.Is(err, agent.ErrSchema):
		return "The model's answer did not match the extraction format, so nothing was merged. Try again; if it keeps failing, try another model."
	}
	return modelFailure(p, err)
}
