package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/adr"
	"github.com/baton-dev/baton/views"
)

// captureMemory keeps a frozen snapshot in the workspace memory: decision
// records, learnings and relationships. With a model as the reversal judge
// this may take a few calls, so the browser path runs it in the background;
// the API waits for it.
func (s *Server) captureMemory(ctx context.Context, sn *store.Snapshot) error {
	h, err := s.db.FindHandoffByID(ctx, sn.HandoffID)
	if err != nil {
		return err
	}
	ctx = agent.WithWorkspace(ctx, h.WorkspaceID) // the judge's calls count against it
	res, err := agent.CaptureSnapshot(ctx, s.db, sn, h.WorkspaceID, s.judge)
	if err != nil {
		return fmt.Errorf("capture snapshot %s: %w", sn.ID, err)
	}
	s.log.Info("memory captured", "snapshot", sn.ID, "records", res.Created, "updated", res.Updated,
		"learnings", res.Learnings, "relationships", res.Relationships, "superseded", len(res.Superseded))
	return nil
}

// captureInBackground runs captureMemory detached from the request,
// tracked so that Shutdown waits for it.
func (s *Server) captureInBackground(ctx context.Context, sn *store.Snapshot) {
	s.background.Add(1)
	go func() {
		defer s.background.Done()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		if err := s.captureMemory(ctx, sn); err != nil {
			s.log.Error("memory capture", "snapshot", sn.ID, "err", err)
		}
	}()
}

// RecoverMemory captures, in the background, the snapshots whose capture
// failed or was cut short (by a crash, a timeout, a model error), so that
// every frozen handoff ends up in memory. Shutdown waits for it.
func (s *Server) RecoverMemory(ctx context.Context) {
	s.background.Add(1)
	go func() {
		defer s.background.Done()
		snaps, err := s.db.FindUncapturedSnapshots(ctx, 100)
		if err != nil {
			s.log.Error("memory recovery", "err", err)
			return
		}
		for _, sn := range snaps {
			if ctx.Err() != nil {
				return
			}
			if err := s.captureMemory(ctx, sn); err != nil {
				s.log.Error("memory recovery", "snapshot", sn.ID, "err", err)
			}
		}
	}()
}

// memoryFor builds the "Workspace memory" prompt section for a
// conversation; a failure leaves memory out rather than failing the call.
func (s *Server) memoryFor(ctx context.Context, workspaceID, query string) string {
	mem, err := agent.MemoryPrompt(ctx, s.db, workspaceID, query, s.memoryBudget)
	if err != nil {
		s.log.Warn("memory prompt", "err", err)
		return ""
	}
	return mem
}

// handleMemory serves GET /memory: search over decisions, learnings and risks.
func (s *Server) handleMemory(c echo.Context) error {
	ctx := c.Request().Context()
	ms := views.MemorySearch{Query: strings.TrimSpace(c.QueryParam("q")), Scope: strings.TrimSpace(c.QueryParam("scope")),
		Status: c.QueryParam("status")}
	status, err := recordStatus(ms.Status)
	if err != nil {
		return err
	}
	ws, err := workspaceOf(c)
	if err != nil {
		return err
	}
	terms := agent.SearchTerms(ms.Query)
	if ms.Decisions, err = s.db.FindDecisionRecords(ctx, store.DecisionRecordFilter{WorkspaceID: ws, Terms: terms, Scope: ms.Scope, Status: status}); err != nil {
		return err
	}
	if ms.Risks, err = s.db.FindLearnings(ctx, store.LearningFilter{WorkspaceID: ws, Terms: terms, Kind: store.LearningRisk, Limit: 20}); err != nil {
		return err
	}
	if ms.Query != "" {
		if ms.Learnings, err = s.db.FindLearnings(ctx, store.LearningFilter{WorkspaceID: ws, Terms: terms, Limit: 20}); err != nil {
			return err
		}
	}
	return s.render(c, http.StatusOK, views.MemoryPage(s.meta(c, "Memory"), ms))
}

func recordStatus(s string) (store.DecisionStatus, error) {
	switch st := store.DecisionStatus(s); st {
	case "", store.DecisionActive, store.DecisionSuperseded:
		return st, nil
	}
	return "", store.Errorf(store.EINVALID, "Status must be active or superseded, not %q.", s)
}

// handleDecisionShow serves GET /decisions/:id.
func (s *Server) handleDecisionShow(c echo.Context) error {
	ctx := c.Request().Context()
	d, err := s.decisionIn(c, c.Param("id"))
	if err != nil {
		return err
	}
	// Candidates to supersede it: other active decisions of the same scope.
	others, err := s.db.FindDecisionRecords(ctx, store.DecisionRecordFilter{WorkspaceID: d.WorkspaceID, Scope: d.Scope, Status: store.DecisionActive, Limit: 50})
	if err != nil {
		return err
	}
	var cands []*store.DecisionRecord
	for _, o := range others {
		if o.ID != d.ID {
			cands = append(cands, o)
		}
	}
	return s.render(c, http.StatusOK, views.DecisionPage(s.meta(c, "Decision"), d, cands))
}

// handleDecisionSupersede serves POST /decisions/:id/supersede (form field "by").
func (s *Server) handleDecisionSupersede(c echo.Context) error {
	if c.FormValue("by") == "" {
		return store.Errorf(store.EINVALID, "Choose the decision that replaces this one.")
	}
	// The replacement must be of this workspace too (404 otherwise, as if missing).
	if _, err := s.decisionIn(c, c.FormValue("by")); err != nil {
		return err
	}
	if err := s.db.SupersedeDecisionRecord(c.Request().Context(), c.Param("id"), c.FormValue("by")); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/decisions/"+c.Param("id"))
}

// handleDecisionReactivate serves POST /decisions/:id/reactivate.
func (s *Server) handleDecisionReactivate(c echo.Context) error {
	if err := s.db.ReactivateDecisionRecord(c.Request().Context(), c.Param("id")); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/decisions/"+c.Param("id"))
}

// handleDecisionADR serves GET /decisions/:id/adr.md: the decision as a
// MADR-style markdown file.
func (s *Server) handleDecisionADR(c echo.Context) error {
	d, err := s.decisionIn(c, c.Param("id"))
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderContentDisposition, `attachment; filename="`+adr.FileName(1, *d)+`"`)
	return c.Blob(http.StatusOK, "text/markdown; charset=utf-8", adr.Markdown(*d, adr.Options{}))
}

// handleADRZip serves GET /decisions/adr.zip: every active decision as ADRs.
func (s *Server) handleADRZip(c echo.Context) error {
	ctx := c.Request().Context()
	ws, err := workspaceOf(c)
	if err != nil {
		return err
	}
	list, err := s.db.FindDecisionRecords(ctx, store.DecisionRecordFilter{WorkspaceID: ws, Status: store.DecisionActive, Limit: store.MaxSearchLimit})
	if err != nil {
		return err
	}
	full := make([]*store.DecisionRecord, 0, len(list))
	for _, d := range list {
		r, err := s.db.FindDecisionRecordByID(ctx, d.ID)
		if err != nil {
			return err
		}
		full = append(full, r)
	}
	zip, err := adr.Zip(full, adr.Options{})
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderContentDisposition, `attachment; filename="decisions-adr.zip"`)
	return c.Blob(http.StatusOK, "application/zip", zip)
}

// handleFileShow serves GET /files/*: what decisions affected a file and
// what risks it carries.
func (s *Server) handleFileShow(c echo.Context) error {
	ctx := c.Request().Context()
	path, err := store.ParsePath(filePathParam(c))
	if err != nil {
		return err
	}
	ws, err := workspaceOf(c)
	if err != nil {
		return err
	}
	rel, err := s.db.FindFileRelationships(ctx, ws, path)
	if errors.Is(err, store.ErrNotFound) {
		rel = &store.FileRelationships{Path: path}
	} else if err != nil {
		return err
	}
	learnings, err := s.db.FindLearnings(ctx, store.LearningFilter{WorkspaceID: ws, Kind: store.LearningFile, Path: path, Limit: 10})
	if err != nil {
		return err
	}
	return s.render(c, http.StatusOK, views.FilePage(s.meta(c, path), rel, learnings))
}

// filePathParam is the path after /files/. Echo routes a path with escapes
// Go keeps (%2F) as it is and leaves the parameter escaped: decode it once.
func filePathParam(c echo.Context) string {
	if p, err := url.PathUnescape(c.Param("*")); err == nil && c.Request().URL.RawPath != "" {
		return p
	}
	return c.Param("*")
}

// recordJSON is a decision record in the JSON API.
type recordJSON struct {
	ID           string    `json:"id"`
	Content      string    `json:"content"`
	Scope        string    `json:"scope"`
	Status       string    `json:"status"`
	SupersededBy string    `json:"supersededBy,omitempty"`
	Confidence   *float64  `json:"confidence"`
	HandoffID    string    `json:"handoffId"`
	ThreadID     string    `json:"threadId"`
	SnapshotID   string    `json:"snapshotId"`
	Label        string    `json:"label"`
	MessageIDs   []string  `json:"messageIds"`
	Snippet      string    `json:"snippet,omitempty"`
	Files        []string  `json:"files,omitempty"`
	Risks        []string  `json:"risks,omitempty"`
	Chain        []string  `json:"chain,omitempty"`
	CreatedAt    time.Time `json:"createdAt"`
	UpdatedAt    time.Time `json:"updatedAt"`
}

func newRecordJSON(d *store.DecisionRecord) *recordJSON {
	out := &recordJSON{ID: d.ID, Content: d.Content, Scope: d.Scope, Status: string(d.Status), SupersededBy: d.SupersededBy,
		Confidence: d.Confidence, HandoffID: d.HandoffID, ThreadID: d.ThreadID, SnapshotID: d.SnapshotID, Label: d.Label,
		MessageIDs: ids(d.MessageIDs), CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
	for _, p := range d.Snippet {
		if p.Match {
			out.Snippet += "[" + p.Text + "]"
		} else {
			out.Snippet += p.Text
		}
	}
	for _, f := range d.Files {
		out.Files = append(out.Files, f.Target)
	}
	for _, r := range d.Risks {
		out.Risks = append(out.Risks, r.Target)
	}
	if len(d.Chain) > 1 {
		for _, c := range d.Chain {
			out.Chain = append(out.Chain, c.ID)
		}
	}
	return out
}

// handleAPIDecisionList serves GET /api/v1/decisions?q=&scope=&status=.
// Snippets mark matching words with [brackets].
func (s *Server) handleAPIDecisionList(c echo.Context) error {
	status, err := recordStatus(c.QueryParam("status"))
	if err != nil {
		return err
	}
	ws, err := workspaceOf(c)
	if err != nil {
		return err
	}
	list, err := s.db.FindDecisionRecords(c.Request().Context(), store.DecisionRecordFilter{WorkspaceID: ws,
		Terms: agent.SearchTerms(c.QueryParam("q")), Scope: c.QueryParam("scope"), Status: status})
	if err != nil {
		return err
	}
	out := make([]*recordJSON, len(list))
	for i, d := range list {
		out[i] = newRecordJSON(d)
	}
	return c.JSON(http.StatusOK, map[string]any{"decisions": out})
}

// handleAPIDecisionShow serves GET /api/v1/decisions/:id.
func (s *Server) handleAPIDecisionShow(c echo.Context) error {
	d, err := s.decisionIn(c, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newRecordJSON(d))
}

// handleAPIDecisionSupersede serves POST /api/v1/decisions/:id/supersede
// {"by": id}: the decision is superseded by another one.
func (s *Server) handleAPIDecisionSupersede(c echo.Context) error {
	var in struct {
		By string `json:"by"`
	}
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	if in.By == "" {
		return store.Errorf(store.EINVALID, `Name the decision that replaces it: {"by": "<decision id>"}.`)
	}
	ctx := c.Request().Context()
	// The replacement must be of this workspace too (404 otherwise, as if missing).
	if _, err := s.decisionIn(c, in.By); err != nil {
		return err
	}
	if err := s.db.SupersedeDecisionRecord(ctx, c.Param("id"), in.By); err != nil {
		return err
	}
	return s.handleAPIDecisionShow(c)
}

// handleAPIDecisionReactivate serves POST /api/v1/decisions/:id/reactivate.
func (s *Server) handleAPIDecisionReactivate(c echo.Context) error {
	if err := s.db.ReactivateDecisionRecord(c.Request().Context(), c.Param("id")); err != nil {
		return err
	}
	return s.handleAPIDecisionShow(c)
}

// handleAPIFileRelationships serves GET /api/v1/files/{path}/relationships:
// the decisions that affected the file and the risks it carries.
func (s *Server) handleAPIFileRelationships(c echo.Context) error {
	raw, ok := strings.CutSuffix(filePathParam(c), "/relationships")
	if !ok {
		return echo.NewHTTPError(http.StatusNotFound)
	}
	path, err := store.ParsePath(raw)
	if err != nil {
		return err
	}
	ws, err := workspaceOf(c)
	if err != nil {
		return err
	}
	rel, err := s.db.FindFileRelationships(c.Request().Context(), ws, path)
	if err != nil {
		return err
	}
	type decision struct {
		ID       string    `json:"id"`
		Content  string    `json:"content"`
		Status   string    `json:"status"`
		Count    int       `json:"count"`
		LastSeen time.Time `json:"lastSeen"`
	}
	type risk struct {
		Description string    `json:"description"`
		Severity    string    `json:"severity"`
		Mitigation  string    `json:"mitigation,omitempty"`
		Count       int       `json:"count"`
		LastSeen    time.Time `json:"lastSeen"`
	}
	out := struct {
		Path      string     `json:"path"`
		Decisions []decision `json:"decisions"`
		Risks     []risk     `json:"risks"`
	}{Path: rel.Path, Decisions: []decision{}, Risks: []risk{}}
	for _, d := range rel.Decisions {
		dj := decision{ID: d.Source, Count: d.Count, LastSeen: d.LastSeen}
		if d.Record != nil {
			dj.ID, dj.Content, dj.Status = d.Record.ID, d.Record.Content, string(d.Record.Status)
		}
		out.Decisions = append(out.Decisions, dj)
	}
	for _, r := range rel.Risks {
		out.Risks = append(out.Risks, risk{Description: r.Target, Severity: string(r.Severity), Mitigation: r.Mitigation, Count: r.Count, LastSeen: r.LastSeen})
	}
	return c.JSON(http.StatusOK, out)
}
