package web

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/envelope"
)

// problemJSON is one problem of an envelope in the JSON API.
type problemJSON struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// envelopeErrorJSON is the 422 of an envelope with problems: the API's
// error body with every problem beside it.
type envelopeErrorJSON struct {
	Error struct {
		Code     string        `json:"code"`
		Message  string        `json:"message"`
		Problems []problemJSON `json:"problems"`
	} `json:"error"`
}

func newProblemsJSON(ps envelope.Problems) []problemJSON {
	out := make([]problemJSON, len(ps))
	for i, p := range ps {
		out[i] = problemJSON{Path: p.Path, Message: p.Message}
	}
	return out
}

// attachment sets Content-Disposition to download as name.
func attachment(c echo.Context, name string) {
	c.Response().Header().Set(echo.HeaderContentDisposition, mime.FormatMediaType("attachment", map[string]string{"filename": name}))
}

// handleSchema serves GET /schemas/handoff-envelope-1.0.json: the
// envelope's JSON Schema, whose $id is this address on baton.dev.
func (s *Server) handleSchema(c echo.Context) error {
	c.Response().Header().Set(echo.HeaderCacheControl, "public, max-age=3600")
	c.Response().Header().Set("Access-Control-Allow-Origin", "*")
	return c.Blob(http.StatusOK, "application/schema+json", envelope.Schema)
}

// handleAPIHandoffEnvelope serves GET /api/v1/handoffs/:id/envelope: the
// envelope of the handoff's latest snapshot, named as an export names it.
// 409 when the handoff has never been frozen.
func (s *Server) handleAPIHandoffEnvelope(c echo.Context) error {
	b, err := envelope.ExportHandoff(c.Request().Context(), s.db, c.Param("id"))
	if err != nil {
		return err
	}
	attachment(c, envelope.BaseName(b.Envelope))
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, b.JSON)
}

// handleAPIPlanEnvelope serves GET /api/v1/plans/:id/envelope: a plan
// envelope, or the error envelope of a failed or cancelled plan. 409 while
// the plan is being written.
func (s *Server) handleAPIPlanEnvelope(c echo.Context) error {
	b, err := envelope.ExportPlan(c.Request().Context(), s.db, c.Param("id"))
	if err != nil {
		return err
	}
	attachment(c, envelope.BaseName(b.Envelope))
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, b.JSON)
}

// handleAPIAgentHandoffEnvelope serves GET
// /api/v1/agent-handoffs/:id/envelope: the agent_handoff envelope of a
// handoff of the caller's workspace, whose session is the workspace and
// product its name. 404 for a handoff of another workspace.
func (s *Server) handleAPIAgentHandoffEnvelope(c echo.Context) error {
	ctx := c.Request().Context()
	b, err := s.agentHandoffEnvelope(ctx, callerFrom(ctx).WorkspaceID, c.Param("id"))
	if err != nil {
		return err
	}
	attachment(c, envelope.BaseName(b.Envelope))
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, b.JSON)
}

// agentHandoffEnvelope is the validated envelope of the agent handoff id
// of a workspace (the default one when empty).
func (s *Server) agentHandoffEnvelope(ctx context.Context, workspaceID, id string) (*envelope.Bundle, error) {
	h, err := s.db.FindAgentHandoffByID(ctx, workspaceID, id)
	if err != nil {
		return nil, err
	}
	w, err := s.db.FindWorkspaceByID(ctx, h.WorkspaceID)
	if err != nil {
		return nil, err
	}
	e, err := envelope.FromAgentHandoff(envelope.NewAgentHandoffInput(h, w))
	if err != nil {
		return nil, err
	}
	return envelope.NewBundle(e, nil, envelope.Options{})
}

// importJSON is the answer to an import.
type importJSON struct {
	Kind      string `json:"kind"`
	HandoffID string `json:"handoffId"`
	Created   bool   `json:"created"`
	URL       string `json:"url"`
}

// readEnvelope reads a request body that is an envelope, up to
// envelope.MaxBytes (the server's body limit is lower still).
func readEnvelope(c echo.Context) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(c.Request().Body, envelope.MaxBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) == 0 {
		return nil, &store.Error{Code: eBadJSON, Message: "Send the envelope as the JSON body."}
	}
	return data, nil
}

// envelopeProblems answers 422 with every problem of an envelope.
func envelopeProblems(c echo.Context, ps envelope.Problems) error {
	var body envelopeErrorJSON
	err := ps.Err()
	body.Error.Code, body.Error.Message = store.ErrorCode(err), store.ErrorMessage(err)
	body.Error.Problems = newProblemsJSON(ps)
	return c.JSON(http.StatusUnprocessableEntity, body)
}

// handleAPIEnvelopeImport serves POST /api/v1/envelopes: it imports, into
// the caller's workspace, a brainstorm_handoff envelope as a new draft
// handoff or an agent_handoff envelope as a new agent handoff (201), or
// finds what an earlier import of the same envelope made (200). An
// envelope with problems answers 422 listing them, and imports nothing;
// other kinds answer 422 saying why.
func (s *Server) handleAPIEnvelopeImport(c echo.Context) error {
	data, err := readEnvelope(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	imp, ps, err := envelope.Import(ctx, s.db, callerFrom(ctx).WorkspaceID, data, envelope.Options{})
	if err != nil {
		return err
	}
	if len(ps) > 0 {
		return envelopeProblems(c, ps)
	}
	status := http.StatusOK
	if imp.Created {
		status = http.StatusCreated
	}
	url := fmt.Sprintf("/h/%s", imp.HandoffID)
	if imp.Kind == envelope.KindAgentHandoff {
		url = fmt.Sprintf("/agents/handoffs/%s", imp.HandoffID)
	}
	return c.JSON(status, importJSON{Kind: string(imp.Kind), HandoffID: imp.HandoffID, Created: imp.Created, URL: url})
}

// validationJSON is the answer to a validation.
type validationJSON struct {
	Valid    bool          `json:"valid"`
	Kind     string        `json:"kind,omitempty"`
	Problems []problemJSON `json:"problems"`
}

// handleAPIEnvelopeValidate serves POST /api/v1/envelopes/validate: it
// checks an envelope against the contract and Baton's snapshots and plans
// without importing it, and answers 200 with its problems.
func (s *Server) handleAPIEnvelopeValidate(c echo.Context) error {
	data, err := readEnvelope(c)
	if err != nil {
		return err
	}
	e, ps := envelope.Check(data, envelope.StoreOptions(c.Request().Context(), s.db))
	out := validationJSON{Valid: len(ps) == 0, Problems: newProblemsJSON(ps)}
	if e != nil {
		out.Kind = string(e.Payload.Kind())
	}
	return c.JSON(http.StatusOK, out)
}

// handleHandoffExport serves GET /h/:id/export.zip: the latest snapshot's
// envelope in an export's layout.
func (s *Server) handleHandoffExport(c echo.Context) error {
	b, err := envelope.ExportHandoff(c.Request().Context(), s.db, c.Param("id"))
	if err != nil {
		return err
	}
	return sendZip(c, b)
}

// handlePlanExport serves GET /p/:id/export.zip: the plan's envelope and
// markdown in an export's layout.
func (s *Server) handlePlanExport(c echo.Context) error {
	b, err := envelope.ExportPlan(c.Request().Context(), s.db, c.Param("id"))
	if err != nil {
		return err
	}
	return sendZip(c, b)
}

func sendZip(c echo.Context, b *envelope.Bundle) error {
	data, err := b.Zip()
	if err != nil {
		return err
	}
	attachment(c, b.ZipName())
	return c.Blob(http.StatusOK, "application/zip", data)
}
