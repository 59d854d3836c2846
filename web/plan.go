package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/views"
)

// planner is the plan agent over this server's store and model.
func (s *Server) planner() *agent.Planner {
	return &agent.Planner{DB: s.db, Provider: s.provider, Logger: s.log,
		Memory: func(ctx context.Context, sn *store.Snapshot) string {
			h, err := s.db.FindHandoffByID(ctx, sn.HandoffID)
			if err != nil {
				return ""
			}
			return s.memoryFor(ctx, h.WorkspaceID, snapshotQuery(sn))
		}}
}

// planKey names the job that writes a plan of a snapshot: the store keeps
// one plan of a snapshot running at a time.
func planKey(snapshotID string) string { return "plan:" + snapshotID }

// startPlan creates a plan of a snapshot and runs the agent in the
// background; the plan page follows it over SSE. If a plan of the snapshot
// is being written already, it returns that job, and started is false. The job's ref is the
// plan's ID. It emits "step" events (rendered steps) and "delta" events
// (escaped text) and runs whether or not anyone follows it.
func (s *Server) startPlan(ctx context.Context, snapshotID string) (j *job, started bool, err error) {
	return s.startPlanWith(ctx, snapshotID, planOptions{})
}

// startPlanWith is startPlan with review comments for the agent (see
// planOptions); the plan's handoff pages hear when it ends.
func (s *Server) startPlanWith(ctx context.Context, snapshotID string, opts planOptions) (j *job, started bool, err error) {
	return s.jobs.start(ctx, jobSpec{key: planKey(snapshotID), kind: "plan", orphan: keepOrphan,
		setup: func(ctx context.Context) (string, error) {
			plan, err := s.db.CreatePlan(ctx, snapshotID)
			if err != nil {
				return "", err
			}
			if err := s.db.LinkPlanReviewComments(ctx, plan.ID, opts.commentIDs); err != nil {
				return "", err
			}
			return plan.ID, nil
		},
		run: func(ctx context.Context, j *job) error {
			plan, err := opts.planner(s.planner()).Run(ctx, j.ref, agent.PlanHooks{
				OnStep: func(st agent.Step) {
					// Render even when the run was cancelled: its last steps still show.
					var buf bytes.Buffer
					if err := views.PlanStepItem(&store.PlanStep{Description: st.Description, IsError: st.IsError,
						InputTokens: st.Usage.InputTokens, OutputTokens: st.Usage.OutputTokens}).Render(context.WithoutCancel(ctx), &buf); err == nil {
						j.emit("step", buf.String())
					}
				},
				OnDelta: func(d agent.Delta) { j.emit("delta", templ.EscapeString(d.Text)) },
			})
			if err != nil {
				s.log.Error("plan run", "plan", j.ref, "err", err)
			}
			s.publishPlanDone(plan)
			return err
		}})
}

// findPlan returns the job writing plan, or nil.
func (s *Server) findPlan(plan *store.Plan) *job {
	if j := s.jobs.find(planKey(plan.SnapshotID)); j != nil && j.ref == plan.ID {
		return j
	}
	return nil
}

// snapshotQuery is what memory is ranked against when planning: the
// snapshot's summary, decisions and files.
func snapshotQuery(sn *store.Snapshot) string {
	var b strings.Builder
	b.WriteString(sn.Payload.Summary)
	for _, d := range sn.Payload.Decisions {
		b.WriteString("\n" + d.Content)
	}
	for _, f := range sn.Payload.FilesReferenced {
		b.WriteString("\n" + f.Path)
	}
	return b.String()
}

// latestSnapshot returns the snapshot to plan from: the latest one if the
// handoff has not changed since, else a new one.
func (s *Server) latestSnapshot(ctx context.Context, handoffID string) (*store.Snapshot, error) {
	h, err := s.db.FindHandoffByID(ctx, handoffID)
	if err != nil {
		return nil, err
	}
	if h.Status == store.HandoffFrozen {
		snaps, err := s.db.FindSnapshots(ctx, h.ID)
		if err != nil {
			return nil, err
		}
		if len(snaps) > 0 {
			return snaps[0], s.captureMemory(ctx, snaps[0]) // a no-op when captured before
		}
	}
	sn, err := s.db.Freeze(ctx, h.ID, 0)
	if err != nil {
		return nil, err
	}
	return sn, s.captureMemory(ctx, sn)
}

// afterFreeze keeps the new snapshot in memory, starts planning from it
// and opens its plan page.
func (s *Server) afterFreeze(c echo.Context, sn *store.Snapshot) error {
	s.captureInBackground(c.Request().Context(), sn)
	j, _, err := s.startPlan(c.Request().Context(), sn.ID)
	if err != nil {
		return err
	}
	if isHTMX(c) {
		c.Response().Header().Set("HX-Redirect", "/p/"+j.ref)
		return c.NoContent(http.StatusOK)
	}
	return c.Redirect(http.StatusSeeOther, "/p/"+j.ref)
}

// planView gathers what the plan page shows.
func (s *Server) planView(ctx context.Context, plan *store.Plan) (views.PlanView, error) {
	pv := views.PlanView{Plan: plan, Running: plan.Status == store.PlanRunning && s.findPlan(plan) != nil}
	var err error
	if pv.Snapshot, err = s.db.FindSnapshotByID(ctx, plan.SnapshotID); err != nil {
		return pv, err
	}
	if pv.Thread, err = s.db.FindThreadByIDIncludingDeleted(ctx, pv.Snapshot.Payload.ThreadID); err != nil {
		return pv, err
	}
	if pv.Versions, err = s.db.FindPlans(ctx, store.PlanFilter{HandoffID: plan.HandoffID, Limit: 20}); err != nil {
		return pv, err
	}
	pv.HTML = s.markdown.Render(plan.Markdown)
	return pv, nil
}

// handlePlanShow serves GET /p/:id: the plan, or its progress while the
// agent writes it.
func (s *Server) handlePlanShow(c echo.Context) error {
	ctx := c.Request().Context()
	plan, err := s.planIn(c, c.Param("id"))
	if err != nil {
		return err
	}
	pv, err := s.planView(ctx, plan)
	if err != nil {
		return err
	}
	return s.render(c, http.StatusOK, views.PlanPage(s.meta(c, fmt.Sprintf("Plan v%d", plan.Version)), pv))
}

// handlePlanEvents serves GET /p/:id/events: "step" and "delta" events as
// the agent works (replayed from the start for a late page), then "done"
// with the finished plan.
func (s *Server) handlePlanEvents(c echo.Context) error {
	ctx := c.Request().Context()
	plan, err := s.planIn(c, c.Param("id"))
	if err != nil {
		return err
	}
	sse := startSSE(c)
	if j := s.findPlan(plan); j != nil && !followJob(ctx, sse, j) {
		return nil // the client left
	}
	plan, err = s.db.FindPlanByID(ctx, plan.ID)
	if err != nil {
		return err
	}
	pv, err := s.planView(ctx, plan)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := templ.Join(views.PlanBody(pv), views.PlanStatus(plan, true), views.PlanVersions(pv, true)).Render(ctx, &buf); err != nil {
		return err
	}
	return sse.send("done", buf.String())
}

// handlePlanCancel serves POST /p/:id/cancel.
func (s *Server) handlePlanCancel(c echo.Context) error {
	plan, err := s.planIn(c, c.Param("id"))
	if err != nil {
		return err
	}
	if j := s.findPlan(plan); j != nil {
		j.stop(errCancelled)
	}
	if isHTMX(c) {
		return c.NoContent(http.StatusNoContent)
	}
	return c.Redirect(http.StatusSeeOther, "/p/"+c.Param("id"))
}

// handlePlanRerun serves POST /p/:id/rerun: a new version of the plan from
// the same snapshot.
func (s *Server) handlePlanRerun(c echo.Context) error {
	ctx := c.Request().Context()
	plan, err := s.planIn(c, c.Param("id"))
	if err != nil {
		return err
	}
	j, started, err := s.startPlan(ctx, plan.SnapshotID)
	if err == nil && !started && j.ref == plan.ID && plan.Status != store.PlanRunning {
		// The run that wrote this plan has ended but not yet left the
		// registry: wait for it, then start the new version, rather than
		// send the user back to the plan they asked to rerun.
		select {
		case <-j.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		j, _, err = s.startPlan(ctx, plan.SnapshotID)
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/p/"+j.ref)
}

// handlePlanDownload serves GET /p/:id/plan.md.
func (s *Server) handlePlanDownload(c echo.Context) error {
	plan, err := s.planIn(c, c.Param("id"))
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="%s"`, s.planDownloadName(c.Request().Context(), plan)))
	return c.Blob(http.StatusOK, "text/markdown; charset=utf-8", []byte(plan.Markdown))
}

// planJSON is a plan in the JSON API.
type planJSON struct {
	ID         string         `json:"id"`
	HandoffID  string         `json:"handoffId"`
	SnapshotID string         `json:"snapshotId"`
	Version    int            `json:"version"`
	Status     string         `json:"status"`
	Markdown   string         `json:"markdown"`
	Summary    string         `json:"summary"`
	Error      string         `json:"error,omitempty"`
	Coverage   coverageJSON   `json:"coverage"`
	Steps      []planStepJSON `json:"steps"`
	Model      string         `json:"model"`
	Usage      struct {
		InputTokens  int64 `json:"inputTokens"`
		OutputTokens int64 `json:"outputTokens"`
	} `json:"usage"`
	CreatedAt  time.Time  `json:"createdAt"`
	FinishedAt *time.Time `json:"finishedAt,omitempty"`
}

type coverageJSON struct {
	Covered   []string `json:"covered"`
	Uncovered []string `json:"uncovered"`
	Total     int      `json:"total"`
	Text      string   `json:"text"`
}

type planStepJSON struct {
	N            int             `json:"n"`
	Kind         string          `json:"kind"`
	Tool         string          `json:"tool,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	Result       string          `json:"result,omitempty"`
	IsError      bool            `json:"isError"`
	Description  string          `json:"description"`
	InputTokens  int64           `json:"inputTokens"`
	OutputTokens int64           `json:"outputTokens"`
}

func newPlanJSON(p *store.Plan) *planJSON {
	out := &planJSON{ID: p.ID, HandoffID: p.HandoffID, SnapshotID: p.SnapshotID, Version: p.Version,
		Status: string(p.Status), Markdown: p.Markdown, Summary: p.Summary, Error: p.Error, Model: p.Model,
		CreatedAt: p.CreatedAt, Steps: []planStepJSON{},
		Coverage: coverageJSON{Covered: ids(p.Coverage.Covered), Uncovered: ids(p.Coverage.Uncovered),
			Total: p.Coverage.Total(), Text: p.Coverage.String()}}
	out.Usage.InputTokens, out.Usage.OutputTokens = p.InputTokens, p.OutputTokens
	if !p.FinishedAt.IsZero() {
		out.FinishedAt = &p.FinishedAt
	}
	for _, st := range p.Steps {
		out.Steps = append(out.Steps, planStepJSON{N: st.N, Kind: string(st.Kind), Tool: st.Tool, Input: st.Input,
			Result: st.Result, IsError: st.IsError, Description: st.Description,
			InputTokens: st.InputTokens, OutputTokens: st.OutputTokens})
	}
	return out
}

// handleAPIPlanCreate serves POST /api/v1/handoffs/:id/plan: it plans from
// the latest snapshot (freezing the handoff first if it changed since),
// waits for the agent to finish and returns the plan. The run is the same
// as the page's, so /p/{id} follows it live; if the client goes away, the
// run is cancelled. While a plan of the snapshot is being written, it
// returns 409.
func (s *Server) handleAPIPlanCreate(c echo.Context) error {
	ctx := c.Request().Context()
	sn, err := s.latestSnapshot(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	j, started, err := s.startPlan(ctx, sn.ID)
	if err != nil {
		return err
	}
	if !started {
		return fmt.Errorf("a plan is already being written for this snapshot: %w", store.ErrConflict)
	}
	if err := j.wait(ctx); ctx.Err() != nil {
		j.stop(errLeft)
		<-j.done
		return err
	}
	plan, err := s.db.FindPlanByID(ctx, j.ref)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, newPlanJSON(plan))
}

// handleAPIPlanShow serves GET /api/v1/plans/:id.
func (s *Server) handleAPIPlanShow(c echo.Context) error {
	plan, err := s.planIn(c, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newPlanJSON(plan))
}
