package web

import (
	"context"
	"errors"
	"fmt"

	"github.com/a-h/templ"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/store"
)

// errCancelled is the cancel cause when a person cancels an extraction or a plan.
var errCancelled = errors.New("cancelled by the user")

// extractKey names the job that extracts a thread's handoff.
func extractKey(threadID string) string { return "extract:" + threadID }

// startExtraction starts extracting a thread's handoff in the background,
// or returns the job doing it already: two clicks at once share one run.
// The job's ref is the handoff's ID. It emits "progress" events of escaped
// text and is cancelled when nobody has followed it for the grace period.
func (s *Server) startExtraction(ctx context.Context, t *store.Thread) (*job, error) {
	var run *store.ExtractionRun
	j, _, err := s.jobs.start(ctx, jobSpec{key: extractKey(t.ID), kind: "extraction", orphan: graceOrphan,
		setup: func(ctx context.Context) (string, error) {
			if err := s.checkPlannable(ctx, t.ID); err != nil {
				return "", err
			}
			h, err := s.db.EnsureHandoff(ctx, t.ID)
			if err != nil {
				return "", err
			}
			if run, err = s.db.StartExtractionRun(ctx, h.ID); err != nil {
				return "", err
			}
			return h.ID, nil
		},
		run: func(ctx context.Context, j *job) error {
			progress := func(msg string) { j.emit("progress", templ.EscapeString(msg)) }
			progress("Starting…")
			err := s.extract(ctx, run, t, progress)
			if err != nil {
				s.log.Warn("extraction", "thread", t.ID, "run", run.ID, "err", err)
			}
			return err
		}})
	return j, err
}

// findExtraction returns the job extracting a thread's handoff, or nil.
func (s *Server) findExtraction(threadID string) *job { return s.jobs.find(extractKey(threadID)) }

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
	transcript, ids := agent.Transcript(msgs)
	if len(transcript) == 0 {
		return store.Errorf(store.EINVALID, "There is nothing to extract yet: the brainstorm has no messages.")
	}
	progress(fmt.Sprintf("Reading %d messages…", len(transcript)))
	extractor := s.extractor
	if extractor == nil {
		progress(fmt.Sprintf("Asking %s to extract decisions, files and risks…", s.provider.Model()))
		extractor = agent.ModelExtractor(s.provider)
	}
	ex, err := agent.Extract(ctx, extractor, transcript)
	if u := ex.Usage; err != nil && u.InputTokens+u.OutputTokens > 0 {
		// A failed answer still cost tokens: they count toward the budget.
		if uerr := s.db.SetExtractionUsage(endCtx, run.ID, u.InputTokens, u.OutputTokens); uerr != nil {
			err = errors.Join(err, uerr)
		}
	}
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	merge := agent.MergeFrom(ex, ids)
	progress(fmt.Sprintf("Merging %d decisions, %d files, %d risks…", len(merge.Decisions), len(merge.Files), len(merge.Risks)))
	_, err = s.db.CompleteExtractionRun(ctx, run.ID, merge)
	return err
}

// extractionFailure says what failed and how to retry, for people.
func extractionFailure(p agent.Provider, err error) string {
	switch {
	case store.ErrorCode(err) == store.EINVALID:
		return store.ErrorMessage(err)
	case errors.Is(err, agent.ErrSchema):
		return "The model's answer did not match the extraction format, so nothing was merged. Try again; if it keeps failing, try another model."
	}
	return modelFailure(p, err)
}
