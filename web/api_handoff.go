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

func newFileJSON(f *store.FileRef) *fileJSON {
	return &fileJSON{ID: f.ID, Path: f.Path, Relevance: string(f.Relevance),
		Context: f.Context, Source: string(f.Source), MessageIDs: ids(f.MessageIDs)}
}

func newRiskJSON(r *store.Risk) *riskJSON {
	return &riskJSON{ID: r.ID, Description: r.Description, Severity: string(r.Severity),
		Mitigation: r.Mitigation, Source: string(r.Source), MessageIDs: ids(r.MessageIDs)}
}

func newHandoffJSON(h *store.Handoff) *handoffJSON {
	out := &handoffJSON{ID: h.ID, ThreadID: h.ThreadID, Status: string(h.Status), Summary: h.Summary,
		Version: h.Version, CreatedAt: h.CreatedAt, UpdatedAt: h.UpdatedAt,
		Decisions: []*decisionJSON{}, FilesReferenced: []*fileJSON{}, Risks: []*riskJSON{}}
	for _, d := range h.Decisions {
		out.Decisions = append(out.Decisions, newDecisionJSON(d))
	}
	for _, f := range h.Files {
		out.FilesReferenced = append(out.FilesReferenced, newFileJSON(f))
	}
	for _, r := range h.Risks {
		out.Risks = append(out.Risks, newRiskJSON(r))
	}
	return out
}

// apiVersion is the version an API edit is based on: the body's "version"
// or the If-Match header; 0 when the client names none.
func apiVersion(c echo.Context, body *int) (int, error) {
	if body != nil {
		return *body, nil
	}
	if im := strings.Trim(c.Request().Header.Get("If-Match"), `"W/`); im != "" {
		v, err := strconv.Atoi(im)
		if err != nil {
			return 0, &store.Error{Code: eBadVersion, Message: "If-Match must be the handoff version, a number."}
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
	t, err := s.threadIn(c, c.Param("id"))
	if err != nil {
		return err
	}
	if s.findExtraction(t.ID) != nil {
		return store.Errorf(store.ECONFLICT, "An extraction is already running for this thread. Wait for it, or cancel it on the thread page.")
	}
	j, err := s.startExtraction(ctx, t)
	if err != nil {
		return err
	}
	if err := j.wait(ctx); ctx.Err() != nil {
		return err
	}
	if j.err != nil {
		switch {
		case store.ErrorCode(j.err) == store.EINVALID:
			return j.err
		case errors.Is(j.err, context.Canceled):
			return &store.Error{Code: eCancelled, Message: "The extraction was cancelled. Run it again."}
		}
		return &store.Error{Code: eExtractionFailed, Message: extractionFailure(s.provider, j.err)}
	}
	h, err := s.db.FindHandoffByID(ctx, j.ref)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, newHandoffJSON(h))
}

// handleAPIHandoffShow serves GET /api/v1/handoffs/:id.
func (s *Server) handleAPIHandoffShow(c echo.Context) error {
	h, err := s.handoffIn(c, c.Param("id"))
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

// handleAPIItemCreate serves POST /api/v1/handoffs/:id/:kind. Fields left
// out take their defaults: medium relevance or severity, no context or
// mitigation.
func (s *Server) handleAPIItemCreate(c echo.Context) error {
	ctx := c.Request().Context()
	var in itemBody
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	h, _, _, err := s.reviewItem(c)
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
			return store.Errorf(store.EINVALID, `Send the decision as {"content": "…"}.`)
		}
		_, ch, err = s.db.CreateDecision(ctx, h.ID, store.DecisionCreate{Content: *in.Content}, version)
	case "files":
		ch, err = s.db.CreateFileRef(ctx, h.ID, store.FileRefInput{Path: deref(in.Path, ""),
			Relevance: store.Level(deref(in.Relevance, string(store.LevelMedium))), Context: deref(in.Context, "")}, version)
	case "risks":
		ch, err = s.db.CreateRisk(ctx, h.ID, store.RiskInput{Description: deref(in.Description, ""),
			Severity: store.Level(deref(in.Severity, string(store.LevelMedium))), Mitigation: deref(in.Mitigation, "")}, version)
	}
	if err != nil {
		return err
	}
	if h, err = s.db.FindHandoffByID(ctx, h.ID); err != nil {
		return err
	}
	var item any
	switch c.Param("kind") {
	case "decisions":
		item = newDecisionJSON(findDecision(h, ch.ID))
	case "files":
		item = newFileJSON(findFile(h, ch.ID))
	case "risks":
		item = newRiskJSON(findRisk(h, ch.ID))
	}
	c.Response().Header().Set("ETag", strconv.Quote(strconv.Itoa(ch.Version)))
	return c.JSON(http.StatusCreated, item)
}

// deref is *p, or def when p is nil.
func deref(p *string, def string) string {
	if p != nil {
		return *p
	}
	return def
}

// handleAPIItemUpdate serves PATCH /api/v1/handoffs/:id/:kind/:item.
// Fields left out keep their values; a body that sets none is refused.
// Without a version (body or If-Match) the edit applies to the current one.
func (s *Server) handleAPIItemUpdate(c echo.Context) error {
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
	version = editVersion(version, h)
	var item any
	var ch store.Change
	switch c.Param("kind") {
	case "decisions":
		var d *store.Decision
		d, ch, err = s.db.UpdateDecision(ctx, h.ID, id, store.DecisionUpdate{Content: in.Content, Version: version})
		if err == nil {
			item = newDecisionJSON(d)
		}
	case "files":
		var f *store.FileRef
		f, ch, err = s.db.UpdateFileRef(ctx, h.ID, id, store.FileRefUpdate{Path: in.Path,
			Relevance: (*store.Level)(in.Relevance), Context: in.Context, Version: version})
		if err == nil {
			item = newFileJSON(f)
		}
	case "risks":
		var r *store.Risk
		r, ch, err = s.db.UpdateRisk(ctx, h.ID, id, store.RiskUpdate{Description: in.Description,
			Severity: (*store.Level)(in.Severity), Mitigation: in.Mitigation, Version: version})
		if err == nil {
			item = newRiskJSON(r)
		}
	}
	if err != nil {
		return err
	}
	c.Response().Header().Set("ETag", strconv.Quote(strconv.Itoa(ch.Version)))
	return c.JSON(http.StatusOK, item)
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
	sn, err := s.snapshotIn(c, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newSnapshotJSON(sn))
}
