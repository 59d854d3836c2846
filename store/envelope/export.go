package envelope

import (
	"context"
	"fmt"

	"github.com/baton-dev/baton/store"
)

// Finder is what exporting and validating read of the store; *store.DB
// has it.
type Finder interface {
	FindHandoffByID(ctx context.Context, id string) (*store.Handoff, error)
	FindSnapshots(ctx context.Context, handoffID string) ([]*store.Snapshot, error)
	FindSnapshotByID(ctx context.Context, id string) (*store.Snapshot, error)
	FindThreadByID(ctx context.Context, id string) (*store.Thread, error)
	FindPlanByID(ctx context.Context, id string) (*store.Plan, error)
}

// StoreOptions are validation options that look things up in the store:
// snapshots by ID, and a plan envelope's markdown as an artifact Baton
// keeps (the plan it names exists, and its file is the path given).
func StoreOptions(ctx context.Context, f Finder) Options {
	return Options{
		Snapshot: func(id string) (*store.Snapshot, bool) {
			sn, err := f.FindSnapshotByID(ctx, id)
			return sn, err == nil
		},
		Artifact: func(e *Envelope, path string) bool {
			p := e.Payload.Plan
			if p == nil {
				return false
			}
			plan, err := f.FindPlanByID(ctx, p.PlanID)
			if err != nil || plan.Markdown != p.Markdown {
				return false
			}
			at := plan.FinishedAt
			if at.IsZero() {
				at = plan.CreatedAt
			}
			return string(PlanFile(e.ProductNameSlug, at)) == path
		},
	}
}

func session(ctx context.Context, f Finder, threadID string) (Session, error) {
	t, err := f.FindThreadByID(ctx, threadID)
	if err != nil {
		return Session{}, err
	}
	return Session{ID: t.ID, ProductName: t.Title, StartedAt: t.CreatedAt}, nil
}

// ExportHandoff is the export of a handoff's latest snapshot: its
// brainstorm_handoff envelope, validated. Returns ENOTFOUND for an unknown
// handoff, ECONFLICT for one never frozen, and EINVALID, naming the
// problems, for a snapshot the contract cannot carry (a summary over
// MaxSummaryLen characters).
func ExportHandoff(ctx context.Context, f Finder, handoffID string) (*Bundle, error) {
	h, err := f.FindHandoffByID(ctx, handoffID)
	if err != nil {
		return nil, err
	}
	sns, err := f.FindSnapshots(ctx, h.ID)
	if err != nil {
		return nil, err
	}
	if len(sns) == 0 {
		return nil, store.Errorf(store.ECONFLICT, "This handoff has not been frozen yet: choose Start planning to freeze it, then export it.")
	}
	s, err := session(ctx, f, h.ThreadID)
	if err != nil {
		return nil, err
	}
	return NewBundle(FromSnapshot(sns[0], s), nil, StoreOptions(ctx, f))
}

// ExportPlan is the export of a plan: its plan envelope and markdown, or,
// for a failed or cancelled plan, its error envelope (FromPlan), validated.
// Returns ENOTFOUND for an unknown plan and ECONFLICT for one still being
// written.
func ExportPlan(ctx context.Context, f Finder, planID string) (*Bundle, error) {
	p, err := f.FindPlanByID(ctx, planID)
	if err != nil {
		return nil, err
	}
	h, err := f.FindHandoffByID(ctx, p.HandoffID)
	if err != nil {
		return nil, err
	}
	s, err := session(ctx, f, h.ThreadID)
	if err != nil {
		return nil, err
	}
	e, err := FromPlan(p, s)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, a := range e.Artifacts.Created {
		files[string(a.Path)] = []byte(p.Markdown)
	}
	return NewBundle(e, files, StoreOptions(ctx, f))
}

// NewBundle encodes e and checks the encoded envelope (Check) with files
// as its bundle and opts' lookups, so that an export is exactly what an
// import would accept. Returns EINVALID naming the problems of an envelope
// Baton must not export. An agent handoff exports as NewBundle(e, nil,
// Options{}) with e from FromAgentHandoff.
func NewBundle(e *Envelope, files map[string][]byte, opts Options) (*Bundle, error) {
	if files == nil {
		files = map[string][]byte{}
	}
	data, err := Encode(e)
	if err != nil {
		return nil, err
	}
	opts.Bundle = func(p string) bool { _, ok := files[p]; return ok }
	if _, ps := Check(data, opts); len(ps) > 0 {
		return nil, fmt.Errorf("export %s: %w", e, ps.Err())
	}
	return &Bundle{Envelope: e, JSON: data, Files: files}, nil
}

// Importer is what importing writes to the store; *store.DB has it.
type Importer interface {
	Finder
	ImportHandoff(ctx context.Context, in store.HandoffImport) (handoffID string, created bool, err error)
	ImportAgentHandoff(ctx context.Context, in store.AgentHandoffImport) (handoffID string, created bool, err error)
}

// Imported says what an import made.
type Imported struct {
	Kind      Kind
	HandoffID string // the draft handoff, or the agent handoff for an agent_handoff
	Created   bool   // false when the same envelope was imported before
}

// Import checks an envelope (Check, with the store's snapshots and
// artifacts besides opts.Bundle) and imports it into the workspace
// workspaceID (the store's default when empty): a brainstorm_handoff
// becomes a new thread with a draft handoff for review, an agent_handoff a
// new pending agent handoff with its context snapshot as given (whose IDs
// must be the workspace's); importing the same session and payload again
// makes nothing new. An envelope with problems returns them and imports
// nothing. Other kinds are refused with EINVALID: Baton reads and
// validates them but keeps no copy.
func Import(ctx context.Context, db Importer, workspaceID string, data []byte, opts Options) (*Imported, Problems, error) {
	so := StoreOptions(ctx, db)
	opts.Snapshot, opts.Artifact = so.Snapshot, so.Artifact
	e, ps := Check(data, opts)
	if len(ps) > 0 {
		return nil, ps, nil
	}
	switch k := e.Payload.Kind(); k {
	case KindBrainstormHandoff:
		sum, err := PayloadSHA256(e)
		if err != nil {
			return nil, nil, err
		}
		in := e.Payload.BrainstormHandoff.HandoffImport(e, sum)
		in.WorkspaceID = workspaceID
		id, created, err := db.ImportHandoff(ctx, in)
		if err != nil {
			return nil, nil, err
		}
		return &Imported{Kind: k, HandoffID: id, Created: created}, nil, nil
	case KindAgentHandoff:
		sum, err := PayloadSHA256(e)
		if err != nil {
			return nil, nil, err
		}
		h, err := e.Payload.AgentHandoff.StoreHandoff(workspaceID)
		if err != nil {
			return nil, nil, err
		}
		id, created, err := db.ImportAgentHandoff(ctx, store.AgentHandoffImport{SessionID: e.SessionID, PayloadSHA256: sum, Handoff: h})
		if err != nil {
			return nil, nil, err
		}
		return &Imported{Kind: k, HandoffID: id, Created: created}, nil, nil
	case "":
		return nil, nil, store.Errorf(store.EINVALID,
			"The envelope is valid, but its payload is another agent's (from %s): Baton passes such envelopes on and imports brainstorm_handoff and agent_handoff ones.", e.SourceAgent.AgentType)
	default:
		return nil, nil, store.Errorf(store.EINVALID,
			"The envelope is valid, but Baton imports brainstorm_handoff and agent_handoff envelopes, not %s ones.", k)
	}
}
