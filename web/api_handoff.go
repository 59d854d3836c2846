package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/store"
)

// decisionJSON is a decision in the JSON API.
type decisionJSON struct {
	ID             string   `json:"id"`
	Label          string   `json:"label"`
	Content        string   `json:"content"`
	Source         string   `json:"source"`
	Confidence     *float64 `json:"confidence"`
	MessageIDs     []string `json:"messageIds"`
	DuringPlanning bool     `json:"duringPlanning"`
}

type fileJSON struct {
	ID         string   `json:"id"`
	Path       string   `json:"path"`
	Relevance  string   `json:"relevance"`
	Context    string   `json:"context"`
	Source     string   `json:"source"`
	MessageIDs []string `json:"messageIds"`
}

type riskJSON struct {
	ID          string   `json:"id"`
	Description string   `json:"description"`
	Severity    string   `json:"severity"`
	Mitigation  string   `json:"mitigation"`
	Source      string   `json:"source"`
	MessageIDs  []string `json:"messageIds"`
}

// handoffJSON is a handoff in the JSON API; its item names follow the
// extraction contract.
type handoffJSON struct {
	ID              string          `json:"id"`
	ThreadID        string          `json:"threadId"`
	Status          string          `json:"status"`
	Summary         string          `json:"summary"`
	Version         int             `json:"version"`
	Decisions       []*decisionJSON `json:"decisions"`
	FilesReferenced []*fileJSON     `json:"filesReferenced"`
	Risks           []*riskJSON     `json:"risks"`
	CreatedAt       time.Time       `json:"createdAt"`
	UpdatedAt       time.Time       `json:"updatedAt"`
}

func ids(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

func newDecisionJSON(d *store.Decision) *decisionJSON {
	return &decisionJSON{ID: d.ID, Label: d.Label, Content: d.Content, Source: string(d.Source),
		Confidence: d.Confidence, MessageIDs: ids(d.MessageIDs), DuringPlanning: d.DuringPlanning}
}

func newHandoffJSON(h *store.Handoff) *handoffJSON {
	out := &handoffJSON{ID: h.ID, ThreadID: h.ThreadID, Status: string(h.Status), Summary: h.Summary,
		Version: h.Version, CreatedAt: h.CreatedAt, UpdatedAt: h.UpdatedAt,
		Decisions: []*decisionJSON{}, FilesReferenced: []*fileJSON{}, Risks: []*riskJSON{}}
	for _, d := range h.Decisions {
		out.Decisions = append(out.Decisions, newDecisionJSON(d))
	}
	for _, f := range h.Files {
		out.FilesReferenced = append(out.FilesReferenced, &fileJSON{ID: f.ID, Path: f.Path, Relevance: string(f.Relevance),
			Context: f.Context, Source: string(f.Source), MessageIDs: ids(f.MessageIDs)})
	}
	for _, r := range h.Risks {
		out.Risks = append(out.Risks, &riskJSON{ID: r.ID, Description: r.Description, Severity: string(r.Severity),
			Mitigation: r.Mitigation, Source: string(r.Source), MessageIDs: ids(r.MessageIDs)})
	}
	return out
}

// apiVersion is the version an API edit is based on: the body's "version"
// or the If-Match header; 0 (absent) skips the check.
func apiVersion(c echo.Context, body *int) (int, error) {
	if body != nil {
		return *body, nil
	}
	if im := strings.Trim(c.Request().Header.Get("If-Match"), `"W/`); im != "" {
		v, err := strconv.Atoi(im)
		if err != nil {
			return 0, apiError(http.StatusBadRequest, "bad_version", "If-Match must be the handoff version, a number.")
		}
		return v, nil
	}
	return 0, nil
}

// handleAPIPin serves POST /api/v1/threads/:id/messages/:mid/pin.
func (s *Server) handleAPIPin(c echo.Context) error {
	content, err := apiPinContent(c)
	if err != nil {
		return err
	}
	d, created, err := s.pinMessage(c.Request().Context(), c.Param("id"), c.Param("mid"), content)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if !created {
		status = http.StatusOK
	}
	return c.JSON(status, newDecisionJSON(d))
}

// handleAPIUnpin serves DELETE /api/v1/threads/:id/messages/:mid/pin.
func (s *Server) handleAPIUnpin(c echo.Context) error {
	if err := s.db.UnpinMessage(c.Request().Context(), c.Param("id"), c.Param("mid")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// handleAPIExtract serves POST /api/v1/threads/:id/handoff: it runs the
// extraction to its end and returns the handoff. The run is the page's
// (the thread page shows it, Cancel reaches it); a request made while one
// runs gets 409. If the client goes away it stops watching, and the run
// ends when nobody else does.
func (s *Server) handleAPIExtract(c echo.Context) error {
	ctx := c.Request().Context()
	t, err := s.db.FindThreadByID(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	if s.extracts.find(t.ID) != nil {
		return apiError(http.StatusConflict, "conflict", "An extraction is already running for this thread. Wait for it, or cancel it on the thread page.")
	}
	j, err := s.startExtraction(ctx, t)
	if err != nil {
		return err
	}
	unwatch := j.watch()
	defer unwatch()
	select {
	case <-j.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if j.err != nil {
		var ve *store.ValidationError
		switch {
		case errors.As(j.err, &ve):
			return j.err
		case errors.Is(j.err, context.Canceled):
			return apiError(http.StatusConflict, "cancelled", "The extraction was cancelled. Run it again.")
		}
		return apiError(http.StatusBadGateway, "extraction_failed", extractionFailure(s.provider, j.err))
	}
	h, err := s.db.FindHandoffByID(ctx, j.run.HandoffID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, newHandoffJSON(h))
}

// handleAPIHandoffShow serves GET /api/v1/handoffs/:id.
func (s *Server) handleAPIHandoffShow(c echo.Context) error {
	h, err := s.db.FindHandoffByID(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newHandoffJSON(h))
}

// itemBody is the JSON body of the item endpoints; each kind uses its fields.
type itemBody struct {
	Content     *string `json:"content"`
	Path        *string `json:"path"`
	Relevance   *string `json:"relevance"`
	Context     *string `json:"context"`
	Description *string `json:"description"`
	Severity    *string `json:"severity"`
	Mitigation  *string `json:"mitigation"`
	Version     *int    `json:"version"`
}

func or(p *string, def string) string {
	if p != nil {
		return *p
	}
	return def
}

// handleAPIItemCreate serves POST /api/v1/handoffs/:id/:kind.
func (s *Server) handleAPIItemCreate(c echo.Context) error {
	return s.apiItemChange(c, http.StatusCreated)
}

// handleAPIItemUpdate serves PATCH /api/v1/handoffs/:id/:kind/:item.
// Fields left out keep their values.
func (s *Server) handleAPIItemUpdate(c echo.Context) error {
	return s.apiItemChange(c, http.StatusOK)
}

func (s *Server) apiItemChange(c echo.Context, status int) error {
	ctx := c.Request().Context()
	var in itemBody
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	h, _, id, err := s.reviewItem(c)
	if err != nil {
		return err
	}
	version, err := apiVersion(c, in.Version)
	if err != nil {
		return err
	}
	var ch store.Change
	switch c.Param("kind") {
	case "decisions":
		if in.Content == nil {
			return apiError(http.StatusUnprocessableEntity, "invalid", `Send the decision as {"content": "…"}.`)
		}
		if id == "" {
			_, ch, err = s.db.CreateDecision(ctx, h.ID, store.DecisionCreate{Content: *in.Content}, version)
		} else {
			_, ch, err = s.db.UpdateDecision(ctx, h.ID, id, *in.Content, version)
		}
	case "files":
		var cur store.FileRef
		if f := findFile(h, id); f != nil {
			cur = *f
		} else {
			cur.Relevance = store.LevelMedium
		}
		path, perr := cleanFilePath(or(in.Path, cur.Path))
		if perr != nil {
			return perr
		}
		fin := store.FileRefInput{Path: path, Relevance: store.Level(or(in.Relevance, string(cur.Relevance))), Context: or(in.Context, cur.Context)}
		if id == "" {
			ch, err = s.db.CreateFileRef(ctx, h.ID, fin, version)
		} else {
			ch, err = s.db.UpdateFileRef(ctx, h.ID, id, fin, version)
		}
	case "risks":
		var cur store.Risk
		if r := findRisk(h, id); r != nil {
			cur = *r
		} else {
			cur.Severity = store.LevelMedium
		}
		rin := store.RiskInput{Description: or(in.Description, cur.Description), Severity: store.Level(or(in.Severity, string(cur.Severity))),
			Mitigation: or(in.Mitigation, cur.Mitigation)}
		if id == "" {
			ch, err = s.db.CreateRisk(ctx, h.ID, rin, version)
		} else {
			ch, err = s.db.UpdateRisk(ctx, h.ID, id, rin, version)
		}
	}
	if err != nil {
		return err
	}
	if h, err = s.db.FindHandoffByID(ctx, h.ID); err != nil {
		return err
	}
	c.Response().Header().Set("ETag", strconv.Quote(strconv.Itoa(ch.Version)))
	j := newHandoffJSON(h)
	for _, d := range j.Decisions {
		if d.ID == ch.ID {
			return c.JSON(status, d)
		}
	}
	for _, f := range j.FilesReferenced {
		if f.ID == ch.ID {
			return c.JSON(status, f)
		}
	}
	for _, r := range j.Risks {
		if r.ID == ch.ID {
			return c.JSON(status, r)
		}
	}
	return c.JSON(status, j)
}

// handleAPIItemDelete serves DELETE /api/v1/handoffs/:id/:kind/:item.
func (s *Server) handleAPIItemDelete(c echo.Context) error {
	h, kind, id, err := s.reviewItem(c)
	if err != nil {
		return err
	}
	version, err := apiVersion(c, nil)
	if err != nil {
		return err
	}
	if _, err := kind.delete(s, c, h, id, version); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// snapshotJSON is a snapshot in the JSON API. Payload is the canonical
// JSON, byte for byte what sha256 covers.
type snapshotJSON struct {
	ID        string          `json:"id"`
	HandoffID string          `json:"handoffId"`
	SHA256    string          `json:"sha256"`
	Payload   json.RawMessage `json:"payload"`
	CreatedAt time.Time       `json:"createdAt"`
}

func newSnapshotJSON(sn *store.Snapshot) *snapshotJSON {
	return &snapshotJSON{ID: sn.ID, HandoffID: sn.HandoffID, SHA256: sn.SHA256, Payload: sn.JSON, CreatedAt: sn.CreatedAt}
}

// handleAPIFreeze serves POST /api/v1/handoffs/:id/freeze. With If-Match,
// a handoff changed since that version is not frozen (409).
func (s *Server) handleAPIFreeze(c echo.Context) error {
	ctx := c.Request().Context()
	version, err := apiVersion(c, nil)
	if err != nil {
		return err
	}
	sn, err := s.db.Freeze(ctx, c.Param("id"), version)
	if err != nil {
		return err
	}
	// The snapshot is committed: a failed capture is logged, not returned
	// (planning from it captures it again; capture is idempotent).
	if err := s.captureMemory(ctx, sn); err != nil {
		s.log.Error("memory capture", "snapshot", sn.ID, "err", err)
	}
	return c.JSON(http.StatusCreated, newSnapshotJSON(sn))
}

// handleAPISnapshotShow serves GET /api/v1/snapshots/:id.
func (s *Server) handleAPISnapshotShow(c echo.Context) error {
	sn, err := s.db.FindSnapshotByID(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newSnapshotJSON(sn))
}
