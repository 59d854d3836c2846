package store_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
)

// brainstorm is a thread with one exchange: a user message and the
// assistant's complete reply.
type brainstorm struct {
	thread *store.Thread
	user   *store.Message
	reply  *store.Message
}

func newBrainstorm(t *testing.T, db *store.DB, reply string) brainstorm {
	t.Helper()
	ctx := context.Background()
	th, err := db.CreateThread(ctx, store.ThreadCreate{Title: "Auth"})
	if err != nil {
		t.Fatal(err)
	}
	b := brainstorm{thread: th}
	b.user, b.reply = addExchange(t, db, th.ID, "How should sessions work?", reply)
	return b
}

func addExchange(t *testing.T, db *store.DB, threadID, question, answer string) (*store.Message, *store.Message) {
	t.Helper()
	ctx := context.Background()
	u, err := db.CreateMessage(ctx, store.MessageCreate{ThreadID: threadID, Role: store.RoleUser, Content: question})
	if err != nil {
		t.Fatal(err)
	}
	a, err := db.CreateMessage(ctx, store.MessageCreate{ThreadID: threadID, Role: store.RoleAssistant, Content: answer, ReplyTo: u.ID})
	if err != nil {
		t.Fatal(err)
	}
	return u, a
}

func mustHandoff(t *testing.T, db *store.DB, id string) *store.Handoff {
	t.Helper()
	h, err := db.FindHandoffByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func ptr[T any](v T) *T { return &v }

// itemsOf lists a handoff's items as "kind|text|source" lines, for
// comparisons that say what changed.
func itemsOf(h *store.Handoff) []string {
	var out []string
	for _, d := range h.Decisions {
		out = append(out, "decision|"+d.Content+"|"+string(d.Source))
	}
	for _, f := range h.Files {
		out = append(out, "file|"+f.Path+"|"+string(f.Relevance)+"|"+string(f.Source))
	}
	for _, r := range h.Risks {
		out = append(out, "risk|"+r.Description+"|"+string(r.Severity)+"|"+string(r.Source))
	}
	return out
}

func TestPinMessage(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	b := newBrainstorm(t, db, "Use JWT in an HttpOnly cookie.")

	if _, err := db.FindHandoffByThread(ctx, b.thread.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("before any pin: FindHandoffByThread err=%v, want ErrNotFound", err)
	}

	d, created, err := db.PinMessage(ctx, b.thread.ID, b.reply.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !created {
		t.Fatal("first pin: created=false, want true")
	}
	if got, want := d.Source, store.SourcePinned; got != want {
		t.Fatalf("Source=%q, want %q", got, want)
	}
	if got, want := d.Content, b.reply.Content; got != want {
		t.Fatalf("Content=%q, want %q", got, want)
	}
	if diff := cmp.Diff([]string{b.reply.ID}, d.MessageIDs); diff != "" {
		t.Fatalf("MessageIDs (-want +got):\n%s", diff)
	}
	if got, want := d.PinnedMessageID, b.reply.ID; got != want {
		t.Fatalf("PinnedMessageID=%q, want %q", got, want)
	}
	if got, want := d.Label, "D1"; got != want {
		t.Fatalf("Label=%q, want %q", got, want)
	}
	h, err := db.FindHandoffByThread(ctx, b.thread.ID)
	if err != nil {
		t.Fatalf("the pin created no handoff: %v", err)
	}
	if h.ID != d.HandoffID || len(h.Decisions) != 1 || h.Status != store.HandoffDraft {
		t.Fatalf("handoff %+v, want the decision's draft handoff with 1 decision", h)
	}
	m, _ := db.FindMessageByID(ctx, b.thread.ID, b.reply.ID)
	if !m.Pinned {
		t.Fatal("message.Pinned=false after pin")
	}

	// Pinning again returns the same decision and adds nothing.
	d2, created, err := db.PinMessage(ctx, b.thread.ID, b.reply.ID)
	if err != nil {
		t.Fatal(err)
	}
	if created || d2.ID != d.ID {
		t.Fatalf("second pin: created=%v id=%s, want false and %s", created, d2.ID, d.ID)
	}
	if got := len(mustHandoff(t, db, h.ID).Decisions); got != 1 {
		t.Fatalf("after pinning twice: %d decisions, want 1", got)
	}

	// Unpin removes the decision and clears the flag.
	if err := db.UnpinMessage(ctx, b.thread.ID, b.reply.ID); err != nil {
		t.Fatal(err)
	}
	if got := len(mustHandoff(t, db, h.ID).Decisions); got != 0 {
		t.Fatalf("after unpin: %d decisions, want 0", got)
	}
	m, _ = db.FindMessageByID(ctx, b.thread.ID, b.reply.ID)
	if m.Pinned {
		t.Fatal("message.Pinned=true after unpin")
	}
	if err := db.UnpinMessage(ctx, b.thread.ID, b.reply.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unpin of an unpinned message: err=%v, want ErrNotFound", err)
	}

	// Pinning again after an unpin uses the same handoff.
	d3, created, err := db.PinMessage(ctx, b.thread.ID, b.reply.ID)
	if err != nil || !created || d3.HandoffID != h.ID {
		t.Fatalf("re-pin: created=%v handoff=%v err=%v, want a new decision in %s", created, d3, err, h.ID)
	}

	// Deleting a pinned decision unpins its message.
	if _, err := db.DeleteDecision(ctx, h.ID, d3.ID, 0); err != nil {
		t.Fatal(err)
	}
	m, _ = db.FindMessageByID(ctx, b.thread.ID, b.reply.ID)
	if m.Pinned {
		t.Fatal("message.Pinned=true after its decision was deleted")
	}
}

func TestPinMessageRefused(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	b := newBrainstorm(t, db, "An answer.")
	other := newBrainstorm(t, db, "Another thread's answer.")
	u2, err := db.CreateMessage(ctx, store.MessageCreate{ThreadID: b.thread.ID, Role: store.RoleUser, Content: "again?"})
	if err != nil {
		t.Fatal(err)
	}
	failed, err := db.CreateMessage(ctx, store.MessageCreate{ThreadID: b.thread.ID, Role: store.RoleAssistant,
		Content: "half an answ", Status: store.StatusFailed, Error: "boom", ReplyTo: u2.ID})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		messageID string
		want      error
	}{
		{"user message", b.user.ID, store.ErrInvalid},
		{"failed reply", failed.ID, store.ErrInvalid},
		{"unknown message", "nope", store.ErrNotFound},
		{"another thread's message", other.reply.ID, store.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := db.PinMessage(ctx, b.thread.ID, tt.messageID)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err=%v, want %v", err, tt.want)
			}
		})
	}
	if _, err := db.FindHandoffByThread(ctx, b.thread.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("refused pins created a handoff: err=%v", err)
	}
	if _, _, err := db.PinMessage(ctx, "nope", b.reply.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown thread: err=%v, want ErrNotFound", err)
	}
}

func TestEnsureHandoff(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	b := newBrainstorm(t, db, "x")
	h1, err := db.EnsureHandoff(ctx, b.thread.ID)
	if err != nil {
		t.Fatal(err)
	}
	h2, err := db.EnsureHandoff(ctx, b.thread.ID)
	if err != nil {
		t.Fatal(err)
	}
	if h1.ID != h2.ID {
		t.Fatalf("EnsureHandoff twice: %s then %s, want the same handoff", h1.ID, h2.ID)
	}
	if h1.Status != store.HandoffDraft || h1.ThreadID != b.thread.ID || h1.WorkspaceID != db.DefaultWorkspaceID() {
		t.Fatalf("new handoff %+v, want a draft of the thread in its workspace", h1)
	}
	if _, err := db.EnsureHandoff(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown thread: err=%v, want ErrNotFound", err)
	}
	if _, err := db.FindHandoffByID(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("FindHandoffByID(nope) err=%v, want ErrNotFound", err)
	}
}

func TestHandoffItemValidation(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	b := newBrainstorm(t, db, "x")
	h, err := db.EnsureHandoff(ctx, b.thread.ID)
	if err != nil {
		t.Fatal(err)
	}
	d, _, err := db.CreateDecision(ctx, h.ID, store.DecisionCreate{Content: "Keep"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	fch, err := db.CreateFileRef(ctx, h.ID, store.FileRefInput{Path: "src/keep.go", Relevance: store.LevelHigh}, 0)
	if err != nil {
		t.Fatal(err)
	}
	rch, err := db.CreateRisk(ctx, h.ID, store.RiskInput{Description: "Keep", Severity: store.LevelLow}, 0)
	if err != nil {
		t.Fatal(err)
	}
	before := mustHandoff(t, db, h.ID)

	long := strings.Repeat("x", store.MaxItemLen+1)
	tests := []struct {
		name string
		do   func() error
		want error
	}{
		{"decision empty", func() error {
			_, _, err := db.CreateDecision(ctx, h.ID, store.DecisionCreate{Content: ""}, 0)
			return err
		}, store.ErrInvalid},
		{"decision whitespace", func() error {
			_, _, err := db.CreateDecision(ctx, h.ID, store.DecisionCreate{Content: " \n\t "}, 0)
			return err
		}, store.ErrInvalid},
		{"decision 2001 chars", func() error {
			_, _, err := db.CreateDecision(ctx, h.ID, store.DecisionCreate{Content: long}, 0)
			return err
		}, store.ErrInvalid},
		{"decision 2001 runes", func() error {
			_, _, err := db.CreateDecision(ctx, h.ID, store.DecisionCreate{Content: strings.Repeat("é", store.MaxItemLen+1)}, 0)
			return err
		}, store.ErrInvalid},
		{"decision control character", func() error {
			_, _, err := db.CreateDecision(ctx, h.ID, store.DecisionCreate{Content: "bell\x07"}, 0)
			return err
		}, store.ErrInvalid},
		{"decision NUL", func() error {
			_, _, err := db.CreateDecision(ctx, h.ID, store.DecisionCreate{Content: "a\x00b"}, 0)
			return err
		}, store.ErrInvalid},
		{"decision confidence above 1", func() error {
			_, _, err := db.CreateDecision(ctx, h.ID, store.DecisionCreate{Content: "ok", Confidence: ptr(1.5)}, 0)
			return err
		}, store.ErrInvalid},
		{"decision bad source", func() error {
			_, _, err := db.CreateDecision(ctx, h.ID, store.DecisionCreate{Content: "ok", Source: "robot"}, 0)
			return err
		}, store.ErrInvalid},
		{"decision unknown handoff", func() error {
			_, _, err := db.CreateDecision(ctx, "nope", store.DecisionCreate{Content: "ok"}, 0)
			return err
		}, store.ErrNotFound},
		{"update decision empty", func() error {
			_, _, err := db.UpdateDecision(ctx, h.ID, d.ID, store.DecisionUpdate{Content: ptr("   "), Version: before.Version})
			return err
		}, store.ErrInvalid},
		{"update decision too long", func() error {
			_, _, err := db.UpdateDecision(ctx, h.ID, d.ID, store.DecisionUpdate{Content: &long, Version: before.Version})
			return err
		}, store.ErrInvalid},
		{"update unknown decision", func() error {
			_, _, err := db.UpdateDecision(ctx, h.ID, "nope", store.DecisionUpdate{Content: ptr("ok"), Version: before.Version})
			return err
		}, store.ErrNotFound},
		{"delete unknown decision", func() error {
			_, err := db.DeleteDecision(ctx, h.ID, "nope", 0)
			return err
		}, store.ErrNotFound},
		{"file empty path", func() error {
			_, err := db.CreateFileRef(ctx, h.ID, store.FileRefInput{Path: " ", Relevance: store.LevelHigh}, 0)
			return err
		}, store.ErrInvalid},
		{"file path too long", func() error {
			_, err := db.CreateFileRef(ctx, h.ID, store.FileRefInput{Path: strings.Repeat("a", store.MaxPathLen+1), Relevance: store.LevelHigh}, 0)
			return err
		}, store.ErrInvalid},
		{"file path control character", func() error {
			_, err := db.CreateFileRef(ctx, h.ID, store.FileRefInput{Path: "src/a\x00.go", Relevance: store.LevelHigh}, 0)
			return err
		}, store.ErrInvalid},
		{"file bad relevance", func() error {
			_, err := db.CreateFileRef(ctx, h.ID, store.FileRefInput{Path: "src/x.go", Relevance: "critical"}, 0)
			return err
		}, store.ErrInvalid},
		{"file empty relevance", func() error {
			_, err := db.CreateFileRef(ctx, h.ID, store.FileRefInput{Path: "src/x.go"}, 0)
			return err
		}, store.ErrInvalid},
		{"file context too long", func() error {
			_, err := db.CreateFileRef(ctx, h.ID, store.FileRefInput{Path: "src/x.go", Relevance: store.LevelLow, Context: long}, 0)
			return err
		}, store.ErrInvalid},
		{"file duplicate path", func() error {
			_, err := db.CreateFileRef(ctx, h.ID, store.FileRefInput{Path: "src/keep.go", Relevance: store.LevelLow}, 0)
			return err
		}, store.ErrConflict},
		{"update file bad relevance", func() error {
			_, _, err := db.UpdateFileRef(ctx, h.ID, fch.ID, store.FileRefUpdate{Relevance: ptr[store.Level]("urgent"), Version: before.Version})
			return err
		}, store.ErrInvalid},
		{"update unknown file", func() error {
			_, _, err := db.UpdateFileRef(ctx, h.ID, "nope", store.FileRefUpdate{Path: ptr("src/y.go"), Version: before.Version})
			return err
		}, store.ErrNotFound},
		{"delete unknown file", func() error {
			_, err := db.DeleteFileRef(ctx, h.ID, "nope", 0)
			return err
		}, store.ErrNotFound},
		{"risk empty", func() error {
			_, err := db.CreateRisk(ctx, h.ID, store.RiskInput{Description: "", Severity: store.LevelHigh}, 0)
			return err
		}, store.ErrInvalid},
		{"risk too long", func() error {
			_, err := db.CreateRisk(ctx, h.ID, store.RiskInput{Description: long, Severity: store.LevelHigh}, 0)
			return err
		}, store.ErrInvalid},
		{"risk bad severity", func() error {
			_, err := db.CreateRisk(ctx, h.ID, store.RiskInput{Description: "x", Severity: "critical"}, 0)
			return err
		}, store.ErrInvalid},
		{"risk control character in mitigation", func() error {
			_, err := db.CreateRisk(ctx, h.ID, store.RiskInput{Description: "x", Severity: store.LevelHigh, Mitigation: "a\x1bb"}, 0)
			return err
		}, store.ErrInvalid},
		{"update risk bad severity", func() error {
			_, _, err := db.UpdateRisk(ctx, h.ID, rch.ID, store.RiskUpdate{Severity: ptr[store.Level]("severe"), Version: before.Version})
			return err
		}, store.ErrInvalid},
		{"update unknown risk", func() error {
			_, _, err := db.UpdateRisk(ctx, h.ID, "nope", store.RiskUpdate{Description: ptr("x"), Version: before.Version})
			return err
		}, store.ErrNotFound},
		{"delete unknown risk", func() error {
			_, err := db.DeleteRisk(ctx, h.ID, "nope", 0)
			return err
		}, store.ErrNotFound},
		{"summary too long", func() error {
			_, err := db.SetSummary(ctx, h.ID, long, 0)
			return err
		}, store.ErrInvalid},
		{"a decision id used as a file id", func() error {
			_, err := db.DeleteFileRef(ctx, h.ID, d.ID, 0)
			return err
		}, store.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.do()
			if !errors.Is(err, tt.want) {
				t.Fatalf("err=%v, want %v", err, tt.want)
			}
			if tt.want == store.ErrInvalid && (store.ErrorCode(err) != store.EINVALID || store.ErrorMessage(err) == store.ErrInvalid.Message) {
				t.Fatalf("err=%v, want an EINVALID *store.Error saying what to fix", err)
			}
			after := mustHandoff(t, db, h.ID)
			if diff := cmp.Diff(itemsOf(before), itemsOf(after)); diff != "" {
				t.Fatalf("a refused change changed the items (-before +after):\n%s", diff)
			}
			if after.Version != before.Version {
				t.Fatalf("Version=%d after a refused change, want %d", after.Version, before.Version)
			}
		})
	}

	// The limits themselves are allowed; newlines and tabs are text.
	at := strings.Repeat("y", store.MaxItemLen)
	if _, _, err := db.CreateDecision(ctx, h.ID, store.DecisionCreate{Content: at}, 0); err != nil {
		t.Fatalf("a decision of exactly %d characters: %v", store.MaxItemLen, err)
	}
	if _, _, err := db.CreateDecision(ctx, h.ID, store.DecisionCreate{Content: "line one\n\tline two"}, 0); err != nil {
		t.Fatalf("newline and tab: %v", err)
	}
	// Levels are case- and space-insensitive.
	if _, err := db.CreateRisk(ctx, h.ID, store.RiskInput{Description: "y", Severity: " HIGH "}, 0); err != nil {
		t.Fatalf("severity %q: %v", " HIGH ", err)
	}
}

func TestHandoffItemCRUD(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	b := newBrainstorm(t, db, "x")
	h, _ := db.EnsureHandoff(ctx, b.thread.ID)

	d1, _, err := db.CreateDecision(ctx, h.ID, store.DecisionCreate{Content: "  First  "}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d1.Source, store.SourcePinned; got != want {
		t.Fatalf("a decision a person adds: Source=%q, want %q", got, want)
	}
	if d1.Content != "First" {
		t.Fatalf("Content=%q, want trimmed %q", d1.Content, "First")
	}
	d2, _, _ := db.CreateDecision(ctx, h.ID, store.DecisionCreate{Content: "Second", Source: store.SourceAI, Confidence: ptr(0.8)}, 0)
	if d2.Label != "D2" || d2.Confidence == nil || *d2.Confidence != 0.8 {
		t.Fatalf("second decision %+v, want D2 with confidence 0.8", d2)
	}
	up, _, err := db.UpdateDecision(ctx, h.ID, d2.ID, store.DecisionUpdate{Content: ptr("Second, edited"), Version: mustHandoff(t, db, h.ID).Version})
	if err != nil {
		t.Fatal(err)
	}
	if up.Content != "Second, edited" || up.Source != store.SourceEdited {
		t.Fatalf("updated %+v, want the new content and source user-edited", up)
	}

	// Remove is a hard delete; labels follow positions.
	if _, err := db.DeleteDecision(ctx, h.ID, d1.ID, 0); err != nil {
		t.Fatal(err)
	}
	got := mustHandoff(t, db, h.ID)
	if len(got.Decisions) != 1 || got.Decisions[0].ID != d2.ID || got.Decisions[0].Label != "D1" {
		t.Fatalf("after deleting D1: %v, want only the second decision, now D1", got.Decisions)
	}
	if _, _, err := db.UpdateDecision(ctx, h.ID, d1.ID, store.DecisionUpdate{Content: ptr("back?"), Version: got.Version}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("updating a deleted decision: err=%v, want ErrNotFound", err)
	}

	fch, err := db.CreateFileRef(ctx, h.ID, store.FileRefInput{Path: "src/a.go", Relevance: "High", Context: "changes"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.UpdateFileRef(ctx, h.ID, fch.ID, store.FileRefUpdate{Path: ptr("src/b.go"), Relevance: ptr(store.LevelLow),
		Context: ptr("only read"), Version: mustHandoff(t, db, h.ID).Version}); err != nil {
		t.Fatal(err)
	}
	rch, err := db.CreateRisk(ctx, h.ID, store.RiskInput{Description: "Leak", Severity: store.LevelHigh}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.UpdateRisk(ctx, h.ID, rch.ID, store.RiskUpdate{Description: ptr("Token leak"), Severity: ptr(store.LevelMedium),
		Mitigation: ptr("rotate"), Version: mustHandoff(t, db, h.ID).Version}); err != nil {
		t.Fatal(err)
	}
	got = mustHandoff(t, db, h.ID)
	if diff := cmp.Diff([]string{"decision|Second, edited|user-edited", "file|src/b.go|low|user-edited", "risk|Token leak|medium|user-edited"}, itemsOf(got)); diff != "" {
		t.Fatalf("items (-want +got):\n%s", diff)
	}
	if got.Files[0].Context != "only read" || got.Risks[0].Mitigation != "rotate" {
		t.Fatalf("file context %q, mitigation %q: edits not stored", got.Files[0].Context, got.Risks[0].Mitigation)
	}
	if _, err := db.DeleteFileRef(ctx, h.ID, fch.ID, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := db.DeleteRisk(ctx, h.ID, rch.ID, 0); err != nil {
		t.Fatal(err)
	}
	got = mustHandoff(t, db, h.ID)
	if len(got.Files) != 0 || len(got.Risks) != 0 {
		t.Fatalf("after deletes: %d files, %d risks, want none", len(got.Files), len(got.Risks))
	}
}

func TestHandoffVersions(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	b := newBrainstorm(t, db, "Pin me.")
	h, _ := db.EnsureHandoff(ctx, b.thread.ID)
	d, _, err := db.CreateDecision(ctx, h.ID, store.DecisionCreate{Content: "D"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	fch, _ := db.CreateFileRef(ctx, h.ID, store.FileRefInput{Path: "src/f.go", Relevance: store.LevelHigh}, 0)
	rch, _ := db.CreateRisk(ctx, h.ID, store.RiskInput{Description: "R", Severity: store.LevelHigh}, 0)

	// Every change bumps the version by one, and says so.
	changes := []struct {
		name string
		do   func(version int) (int, error)
	}{
		{"create decision", func(v int) (int, error) {
			_, ch, err := db.CreateDecision(ctx, h.ID, store.DecisionCreate{Content: "new"}, v)
			return ch.Version, err
		}},
		{"update decision", func(v int) (int, error) {
			_, ch, err := db.UpdateDecision(ctx, h.ID, d.ID, store.DecisionUpdate{Content: ptr("D edited"), Version: v})
			return ch.Version, err
		}},
		{"create file", func(v int) (int, error) {
			ch, err := db.CreateFileRef(ctx, h.ID, store.FileRefInput{Path: "src/g.go", Relevance: store.LevelLow}, v)
			return ch.Version, err
		}},
		{"update file", func(v int) (int, error) {
			_, ch, err := db.UpdateFileRef(ctx, h.ID, fch.ID, store.FileRefUpdate{Relevance: ptr(store.LevelLow), Version: v})
			return ch.Version, err
		}},
		{"create risk", func(v int) (int, error) {
			ch, err := db.CreateRisk(ctx, h.ID, store.RiskInput{Description: "R2", Severity: store.LevelLow}, v)
			return ch.Version, err
		}},
		{"update risk", func(v int) (int, error) {
			_, ch, err := db.UpdateRisk(ctx, h.ID, rch.ID, store.RiskUpdate{Severity: ptr(store.LevelLow), Version: v})
			return ch.Version, err
		}},
		{"set summary", func(v int) (int, error) {
			ch, err := db.SetSummary(ctx, h.ID, "S", v)
			return ch.Version, err
		}},
		{"delete file", func(v int) (int, error) {
			ch, err := db.DeleteFileRef(ctx, h.ID, fch.ID, v)
			return ch.Version, err
		}},
		{"delete risk", func(v int) (int, error) {
			ch, err := db.DeleteRisk(ctx, h.ID, rch.ID, v)
			return ch.Version, err
		}},
		{"delete decision", func(v int) (int, error) {
			ch, err := db.DeleteDecision(ctx, h.ID, d.ID, v)
			return ch.Version, err
		}},
	}
	for _, tt := range changes {
		t.Run(tt.name, func(t *testing.T) {
			before := mustHandoff(t, db, h.ID)
			stale := before.Version - 1

			// A stale version is refused, nothing changes.
			_, err := tt.do(stale)
			if !errors.Is(err, store.ErrConflict) {
				t.Fatalf("stale version %d: err=%v, want ErrConflict", stale, err)
			}
			if !errors.Is(err, store.ErrStaleVersion) {
				t.Fatalf("stale version: err=%v, want ErrStaleVersion", err)
			}
			if got, want := store.ErrorMessage(err), fmt.Sprintf("(version %d, you had %d)", before.Version, stale); !strings.Contains(got, want) {
				t.Fatalf("message %q, want it to name the versions %s", got, want)
			}
			mid := mustHandoff(t, db, h.ID)
			if diff := cmp.Diff(itemsOf(before), itemsOf(mid)); diff != "" || mid.Version != before.Version || mid.Summary != before.Summary {
				t.Fatalf("a stale change changed the handoff (version %d→%d):\n%s", before.Version, mid.Version, diff)
			}

			// The current version is accepted and bumped by one.
			got, err := tt.do(before.Version)
			if err != nil {
				t.Fatalf("current version %d: %v", before.Version, err)
			}
			if want := before.Version + 1; got != want {
				t.Fatalf("Change.Version=%d, want %d", got, want)
			}
			if after := mustHandoff(t, db, h.ID); after.Version != got {
				t.Fatalf("stored Version=%d, want %d", after.Version, got)
			}
		})
	}

	// Version 0 skips the check.
	before := mustHandoff(t, db, h.ID)
	_, ch, err := db.CreateDecision(ctx, h.ID, store.DecisionCreate{Content: "unchecked"}, 0)
	if err != nil {
		t.Fatalf("version 0: %v", err)
	}
	if ch.Version != before.Version+1 {
		t.Fatalf("version 0: Change.Version=%d, want %d", ch.Version, before.Version+1)
	}
	// A version from the future is as stale as one from the past.
	if _, _, err := db.CreateDecision(ctx, h.ID, store.DecisionCreate{Content: "x"}, ch.Version+5); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("future version: err=%v, want ErrConflict", err)
	}

	// Pins count as changes too.
	v := mustHandoff(t, db, h.ID).Version
	if _, _, err := db.PinMessage(ctx, b.thread.ID, b.reply.ID); err != nil {
		t.Fatal(err)
	}
	if got := mustHandoff(t, db, h.ID).Version; got != v+1 {
		t.Fatalf("after pin: Version=%d, want %d", got, v+1)
	}
	if err := db.UnpinMessage(ctx, b.thread.ID, b.reply.ID); err != nil {
		t.Fatal(err)
	}
	if got := mustHandoff(t, db, h.ID).Version; got != v+2 {
		t.Fatalf("after unpin: Version=%d, want %d", got, v+2)
	}
}

func TestCompleteExtractionRunMerge(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	b := newBrainstorm(t, db, "Use JWT for sessions.")
	pinned, _, err := db.PinMessage(ctx, b.thread.ID, b.reply.ID)
	if err != nil {
		t.Fatal(err)
	}
	h := mustHandoff(t, db, pinned.HandoffID)
	edited, _, _ := db.CreateDecision(ctx, h.ID, store.DecisionCreate{Content: "Postgres", Source: store.SourceAI}, 0)
	if _, _, err := db.UpdateDecision(ctx, h.ID, edited.ID, store.DecisionUpdate{Content: ptr("Use Postgres 16."), Version: mustHandoff(t, db, h.ID).Version}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateFileRef(ctx, h.ID, store.FileRefInput{Path: "src/auth.go", Relevance: store.LevelHigh, Context: "mine"}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateRisk(ctx, h.ID, store.RiskInput{Description: "Token leak", Severity: store.LevelHigh}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SetSummary(ctx, h.ID, "Old summary.", 0); err != nil {
		t.Fatal(err)
	}
	before := mustHandoff(t, db, h.ID)

	run, err := db.StartExtractionRun(ctx, h.ID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != store.RunRunning || run.HandoffID != h.ID {
		t.Fatalf("run %+v, want running for %s", run, h.ID)
	}
	added, err := db.CompleteExtractionRun(ctx, run.ID, store.ExtractionMerge{
		Summary: "  We use JWT and Postgres.  ",
		Decisions: []store.DecisionCreate{
			{Content: "use  JWT for sessions", Confidence: ptr(0.9)}, // the pinned one: case and spaces
			{Content: "USE POSTGRES 16!!", Confidence: ptr(0.9)},     // the edited one: case and punctuation
			{Content: "Add rate limiting.", Confidence: ptr(0.7), MessageIDs: []string{b.reply.ID}},
			{Content: "add rate limiting", Confidence: ptr(0.5)},                            // repeated within the merge
			{Content: "Log every login.", Source: store.SourcePinned, Confidence: ptr(0.6)}, // sources are forced to AI
		},
		Files: []store.FileRefInput{
			{Path: "src/auth.go", Relevance: store.LevelLow, Context: "theirs"},
			{Path: "src/limit.go", Relevance: store.LevelMedium, Context: "new middleware", MessageIDs: []string{b.reply.ID}},
		},
		Risks: []store.RiskInput{
			{Description: "token leak.", Severity: store.LevelLow},
			{Description: "Rate limit too strict", Severity: store.LevelMedium, Mitigation: "make it configurable"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := added, 4; got != want {
		t.Fatalf("added=%d, want %d", got, want)
	}
	after := mustHandoff(t, db, h.ID)
	want := []string{
		"decision|Use JWT for sessions.|user-pinned",
		"decision|Use Postgres 16.|user-edited",
		"decision|Add rate limiting.|ai-extracted",
		"decision|Log every login.|ai-extracted",
		"file|src/auth.go|high|user-pinned",
		"file|src/limit.go|medium|ai-extracted",
		"risk|Token leak|high|user-pinned",
		"risk|Rate limit too strict|medium|ai-extracted",
	}
	if diff := cmp.Diff(want, itemsOf(after)); diff != "" {
		t.Fatalf("merged items (-want +got):\n%s", diff)
	}
	// What people pinned or edited is untouched, down to its IDs and text.
	for i, d := range before.Decisions {
		if got := after.Decisions[i]; got.ID != d.ID || got.Content != d.Content || got.Source != d.Source || !got.UpdatedAt.Equal(d.UpdatedAt) {
			t.Fatalf("decision %d changed: %+v, was %+v", i, got, d)
		}
	}
	if after.Files[0].Context != "mine" {
		t.Fatalf("existing file context=%q, want %q", after.Files[0].Context, "mine")
	}
	if got := after.Decisions[2]; got.Confidence == nil || *got.Confidence != 0.7 || !cmp.Equal(got.MessageIDs, []string{b.reply.ID}) {
		t.Fatalf("merged decision %+v, want confidence 0.7 and its source message", got)
	}
	if got := after.Files[1].MessageIDs; !cmp.Equal(got, []string{b.reply.ID}) {
		t.Fatalf("merged file MessageIDs=%v, want [%s]", got, b.reply.ID)
	}
	if got, want := after.Summary, "We use JWT and Postgres."; got != want {
		t.Fatalf("Summary=%q, want %q (replaced)", got, want)
	}
	if after.Version <= before.Version {
		t.Fatalf("Version=%d after a merge, want more than %d", after.Version, before.Version)
	}
	last, err := db.FindLatestExtractionRun(ctx, h.ID)
	if err != nil {
		t.Fatal(err)
	}
	if last.ID != run.ID || last.Status != store.RunSucceeded || last.Added != 4 || last.FinishedAt.IsZero() {
		t.Fatalf("run after merge %+v, want succeeded with 4 added and a finish time", last)
	}

	// A finished run cannot merge again.
	if _, err := db.CompleteExtractionRun(ctx, run.ID, store.ExtractionMerge{Summary: "again"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("completing a finished run: err=%v, want ErrNotFound", err)
	}
	// Merging the same extraction again adds nothing but replaces the summary.
	run2, err := db.StartExtractionRun(ctx, h.ID)
	if err != nil {
		t.Fatal(err)
	}
	added, err = db.CompleteExtractionRun(ctx, run2.ID, store.ExtractionMerge{
		Summary:   "Second summary.",
		Decisions: []store.DecisionCreate{{Content: "Add rate limiting"}},
		Files:     []store.FileRefInput{{Path: "src/limit.go", Relevance: store.LevelHigh}},
	})
	if err != nil || added != 0 {
		t.Fatalf("repeat merge: added=%d err=%v, want 0 and no error", added, err)
	}
	if got := mustHandoff(t, db, h.ID); got.Summary != "Second summary." || len(got.Decisions) != 4 {
		t.Fatalf("after repeat merge: summary %q, %d decisions; want the new summary and 4", got.Summary, len(got.Decisions))
	}
}

func TestCompleteExtractionRunInvalid(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	b := newBrainstorm(t, db, "Pinned.")
	d, _, _ := db.PinMessage(ctx, b.thread.ID, b.reply.ID)
	h := mustHandoff(t, db, d.HandoffID)
	good := store.DecisionCreate{Content: "A good decision", Confidence: ptr(0.9)}
	tests := []struct {
		name  string
		merge store.ExtractionMerge
	}{
		{"file relevance critical", store.ExtractionMerge{Summary: "S", Decisions: []store.DecisionCreate{good},
			Files: []store.FileRefInput{{Path: "src/a.go", Relevance: "critical"}}}},
		{"risk severity unknown", store.ExtractionMerge{Summary: "S", Decisions: []store.DecisionCreate{good},
			Risks: []store.RiskInput{{Description: "r", Severity: "apocalyptic"}}}},
		{"decision too long", store.ExtractionMerge{Summary: "S", Decisions: []store.DecisionCreate{good,
			{Content: strings.Repeat("x", store.MaxItemLen+1)}}}},
		{"decision empty", store.ExtractionMerge{Summary: "S", Decisions: []store.DecisionCreate{good, {Content: ""}}}},
		{"confidence out of range", store.ExtractionMerge{Summary: "S", Decisions: []store.DecisionCreate{{Content: "x", Confidence: ptr(-0.1)}}}},
		{"summary too long", store.ExtractionMerge{Summary: strings.Repeat("s", store.MaxItemLen+1), Decisions: []store.DecisionCreate{good}}},
		{"summary with control characters", store.ExtractionMerge{Summary: "a\x00b", Decisions: []store.DecisionCreate{good}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := mustHandoff(t, db, h.ID)
			run, err := db.StartExtractionRun(ctx, h.ID)
			if err != nil {
				t.Fatal(err)
			}
			defer db.FailExtractionRun(ctx, run.ID, store.RunFailed, "test over")

			_, err = db.CompleteExtractionRun(ctx, run.ID, tt.merge)
			if !errors.Is(err, store.ErrInvalid) {
				t.Fatalf("err=%v, want ErrInvalid", err)
			}
			after := mustHandoff(t, db, h.ID)
			if diff := cmp.Diff(itemsOf(before), itemsOf(after)); diff != "" {
				t.Fatalf("an invalid merge changed the items (-before +after):\n%s", diff)
			}
			if after.Summary != before.Summary || after.Version != before.Version {
				t.Fatalf("summary %q version %d, want %q %d: nothing merged", after.Summary, after.Version, before.Summary, before.Version)
			}
			last, _ := db.FindLatestExtractionRun(ctx, h.ID)
			if last.ID != run.ID || last.Status != store.RunRunning {
				t.Fatalf("run %+v, want it still running (the caller records the failure)", last)
			}
		})
	}
}

func TestExtractionRunSingleFlight(t *testing.T) {
	ctx := context.Background()
	path := storetest.FreshDSN(t)
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { db.Close() }()
	b := newBrainstorm(t, db, "x")
	h, _ := db.EnsureHandoff(ctx, b.thread.ID)
	other, _ := db.EnsureHandoff(ctx, newBrainstorm(t, db, "y").thread.ID)

	if _, err := db.FindLatestExtractionRun(ctx, h.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("no run yet: err=%v, want ErrNotFound", err)
	}
	first, err := db.StartExtractionRun(ctx, h.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.StartExtractionRun(ctx, h.ID); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second start: err=%v, want ErrConflict", err)
	}
	// Another handoff is not blocked.
	if _, err := db.StartExtractionRun(ctx, other.ID); err != nil {
		t.Fatalf("another handoff: %v", err)
	}
	if _, err := db.StartExtractionRun(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown handoff: err=%v, want ErrNotFound", err)
	}

	if err := db.FailExtractionRun(ctx, first.ID, store.RunSucceeded, "no"); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("FailExtractionRun(succeeded): err=%v, want ErrInvalid", err)
	}
	if err := db.FailExtractionRun(ctx, first.ID, store.RunFailed, "The model said no. Try again."); err != nil {
		t.Fatal(err)
	}
	last, _ := db.FindLatestExtractionRun(ctx, h.ID)
	if last.ID != first.ID || last.Status != store.RunFailed || last.Error != "The model said no. Try again." || last.FinishedAt.IsZero() {
		t.Fatalf("failed run %+v, want failed with its message", last)
	}
	// Failing ends it once: a later cancel does not rewrite it.
	db.FailExtractionRun(ctx, first.ID, store.RunCancelled, "late")
	if last, _ := db.FindLatestExtractionRun(ctx, h.ID); last.Status != store.RunFailed {
		t.Fatalf("a finished run was changed to %q", last.Status)
	}

	second, err := db.StartExtractionRun(ctx, h.ID)
	if err != nil {
		t.Fatalf("start after a failure: %v", err)
	}
	if err := db.FailExtractionRun(ctx, second.ID, store.RunCancelled, "Cancelled."); err != nil {
		t.Fatal(err)
	}
	third, err := db.StartExtractionRun(ctx, h.ID)
	if err != nil {
		t.Fatalf("start after a cancel: %v", err)
	}

	// A run left running by a process that went away fails when the next
	// server starts (RecoverInterrupted), not on a plain open.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = store.Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	if _, err := db.StartExtractionRun(ctx, h.ID); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("start after a plain open: err=%v, want ErrConflict (the run is still running)", err)
	}
	if err := db.RecoverInterrupted(ctx); err != nil {
		t.Fatal(err)
	}
	last, err = db.FindLatestExtractionRun(ctx, h.ID)
	if err != nil {
		t.Fatal(err)
	}
	if last.ID != third.ID || last.Status != store.RunFailed || !strings.Contains(last.Error, "Run it again") {
		t.Fatalf("interrupted run %+v, want failed with a message saying to run it again", last)
	}
	if _, err := db.StartExtractionRun(ctx, h.ID); err != nil {
		t.Fatalf("start after reopen: %v", err)
	}
}

func TestFreeze(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	b := newBrainstorm(t, db, "Use JWT <in> a \"cookie\" & more.")
	pinned, _, _ := db.PinMessage(ctx, b.thread.ID, b.reply.ID)
	h := mustHandoff(t, db, pinned.HandoffID)
	second, _, _ := db.CreateDecision(ctx, h.ID, store.DecisionCreate{Content: "Rotate keys monthly", Source: store.SourceAI, Confidence: ptr(0.75)}, 0)
	db.CreateFileRef(ctx, h.ID, store.FileRefInput{Path: "src/auth.go", Relevance: store.LevelHigh, Context: "changes"}, 0)
	db.CreateRisk(ctx, h.ID, store.RiskInput{Description: "Leak", Severity: store.LevelHigh, Mitigation: "short TTL"}, 0)
	db.SetSummary(ctx, h.ID, "We settled auth.", 0)

	sn, err := db.Freeze(ctx, h.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(sn.JSON)
	if got, want := sn.SHA256, hex.EncodeToString(sum[:]); got != want {
		t.Fatalf("SHA256=%s, want sha256 of the JSON %s", got, want)
	}
	p := sn.Payload
	if p.HandoffID != h.ID || p.ThreadID != b.thread.ID || p.Summary != "We settled auth." {
		t.Fatalf("payload %+v, want the handoff's ids and summary", p)
	}
	var labels []string
	for _, d := range p.Decisions {
		labels = append(labels, d.Label+" "+d.Content)
	}
	if diff := cmp.Diff([]string{"D1 " + b.reply.Content, "D2 Rotate keys monthly"}, labels); diff != "" {
		t.Fatalf("decisions (-want +got):\n%s", diff)
	}
	if d, ok := p.DecisionByLabel("d2"); !ok || d.ID != second.ID || d.Confidence == nil || *d.Confidence != 0.75 {
		t.Fatalf("DecisionByLabel(d2)=%+v,%v, want the second decision", d, ok)
	}
	if !cmp.Equal(p.Decisions[0].MessageIDs, []string{b.reply.ID}) || p.Decisions[0].Source != store.SourcePinned {
		t.Fatalf("D1=%+v, want the pinned message as its source", p.Decisions[0])
	}
	if len(p.FilesReferenced) != 1 || p.FilesReferenced[0].Path != "src/auth.go" || len(p.Risks) != 1 || p.Risks[0].Mitigation != "short TTL" {
		t.Fatalf("files %+v risks %+v, want the handoff's", p.FilesReferenced, p.Risks)
	}

	// Canonical: compact, fixed field order, and re-encoding what was
	// stored gives the same bytes.
	if !strings.HasPrefix(string(sn.JSON), `{"handoffId":"`+h.ID+`","threadId":`) {
		t.Fatalf("JSON starts %.60s, want handoffId then threadId first", sn.JSON)
	}
	if strings.Contains(string(sn.JSON), "\n") || strings.Contains(string(sn.JSON), `": `) {
		t.Fatalf("JSON has insignificant whitespace: %s", sn.JSON)
	}
	stored, err := db.FindSnapshotByID(ctx, sn.ID)
	if err != nil {
		t.Fatal(err)
	}
	if string(stored.JSON) != string(sn.JSON) || stored.SHA256 != sn.SHA256 {
		t.Fatalf("stored snapshot differs from the one returned:\n%s\n%s", stored.JSON, sn.JSON)
	}
	sum = sha256.Sum256(stored.JSON)
	if got := hex.EncodeToString(sum[:]); got != stored.SHA256 {
		t.Fatalf("stored sha256 %s is not the sha256 of the stored JSON (%s)", stored.SHA256, got)
	}
	again, err := json.Marshal(stored.Payload)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(stored.JSON) {
		t.Fatalf("re-encoding the payload gives other bytes:\n%s\nwant\n%s", again, stored.JSON)
	}

	if got := mustHandoff(t, db, h.ID).Status; got != store.HandoffFrozen {
		t.Fatalf("Status=%q after freeze, want frozen", got)
	}

	// A later edit makes the handoff a draft and never changes the snapshot.
	if _, _, err := db.UpdateDecision(ctx, h.ID, second.ID, store.DecisionUpdate{Content: ptr("Rotate keys weekly"), Version: mustHandoff(t, db, h.ID).Version}); err != nil {
		t.Fatal(err)
	}
	if got := mustHandoff(t, db, h.ID).Status; got != store.HandoffDraft {
		t.Fatalf("Status=%q after an edit, want draft", got)
	}
	stored, _ = db.FindSnapshotByID(ctx, sn.ID)
	if string(stored.JSON) != string(sn.JSON) || stored.SHA256 != sn.SHA256 {
		t.Fatalf("an edit changed the snapshot:\n%s\nwas\n%s", stored.JSON, sn.JSON)
	}

	// Freezing again makes a new snapshot.
	sn2, err := db.Freeze(ctx, h.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if sn2.ID == sn.ID || sn2.SHA256 == sn.SHA256 {
		t.Fatalf("second freeze reused id or hash: %s %s", sn2.ID, sn2.SHA256)
	}
	if d, _ := sn2.Payload.DecisionByLabel("D2"); d.Content != "Rotate keys weekly" {
		t.Fatalf("second snapshot D2=%q, want the edit", d.Content)
	}
	snaps, err := db.FindSnapshots(ctx, h.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) != 2 || snaps[0].ID != sn2.ID || snaps[1].ID != sn.ID {
		t.Fatalf("FindSnapshots=%d snapshots, want 2, newest first", len(snaps))
	}
	if _, err := db.FindSnapshotByID(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown snapshot: err=%v, want ErrNotFound", err)
	}
}

func TestFreezeRefused(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	b := newBrainstorm(t, db, "x")
	h, _ := db.EnsureHandoff(ctx, b.thread.ID)
	db.CreateRisk(ctx, h.ID, store.RiskInput{Description: "Only a risk", Severity: store.LevelLow}, 0)

	_, err := db.Freeze(ctx, h.ID, 0)
	if !errors.Is(err, store.ErrInvalid) || store.ErrorMessage(err) == store.ErrInvalid.Message {
		t.Fatalf("freeze without decisions: err=%v, want ErrInvalid with a message", err)
	}
	if snaps, _ := db.FindSnapshots(ctx, h.ID); len(snaps) != 0 {
		t.Fatalf("a refused freeze stored %d snapshots", len(snaps))
	}
	if got := mustHandoff(t, db, h.ID).Status; got != store.HandoffDraft {
		t.Fatalf("Status=%q after a refused freeze, want draft", got)
	}
	if _, err := db.Freeze(ctx, "nope", 0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown handoff: err=%v, want ErrNotFound", err)
	}
}

// TestSnapshotsImmutableInSQL goes around the store: even plain SQL on the
// same database (the file, or the PostgreSQL database) cannot change or
// remove a snapshot.
func TestSnapshotsImmutableInSQL(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	b := newBrainstorm(t, db, "Decide.")
	d, _, _ := db.PinMessage(ctx, b.thread.ID, b.reply.ID)
	sn, err := db.Freeze(ctx, d.HandoffID, 0)
	if err != nil {
		t.Fatal(err)
	}

	var raw *sql.DB
	var refused []string // statements the triggers must refuse; ? is the snapshot's id
	if storetest.OnPostgres() {
		// Path is the URL without its password; the test server has none.
		raw, err = sql.Open("pgx", db.Path())
		refused = []string{
			`UPDATE snapshots SET payload = '{}' WHERE id = $1`,
			`UPDATE snapshots SET sha256 = 'forged' WHERE id = $1`,
			`DELETE FROM snapshots WHERE id = $1`,
			`INSERT INTO snapshots (id, handoff_id, payload, sha256, created_at)
			 SELECT id, handoff_id, '{}', 'forged', created_at FROM snapshots WHERE id = $1
			 ON CONFLICT (id) DO UPDATE SET payload = excluded.payload, sha256 = excluded.sha256`,
			`TRUNCATE snapshots CASCADE`,
		}
	} else {
		raw, err = sql.Open("sqlite", "file:"+db.Path()+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)")
		refused = []string{
			`UPDATE snapshots SET payload = '{}' WHERE id = ?`,
			`UPDATE snapshots SET sha256 = 'forged' WHERE id = ?`,
			`DELETE FROM snapshots WHERE id = ?`,
			`INSERT OR REPLACE INTO snapshots (id, handoff_id, payload, sha256, created_at)
			 SELECT id, handoff_id, '{}', 'forged', created_at FROM snapshots WHERE id = ?`,
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, q := range refused {
		var args []any
		if strings.Contains(q, "?") || strings.Contains(q, "$1") {
			args = []any{sn.ID}
		}
		_, err := raw.ExecContext(ctx, q, args...)
		if err == nil || !strings.Contains(err.Error(), "immutable") {
			t.Fatalf("%s: err=%v, want the trigger to refuse it", q, err)
		}
	}
	if _, err := raw.ExecContext(ctx, `DELETE FROM snapshots`); err == nil {
		t.Fatal("DELETE FROM snapshots succeeded")
	}
	stored, err := db.FindSnapshotByID(ctx, sn.ID)
	if err != nil {
		t.Fatal(err)
	}
	if string(stored.JSON) != string(sn.JSON) || stored.SHA256 != sn.SHA256 {
		t.Fatal("the snapshot changed")
	}
}

// TestFreezeStaleVersion checks that a handoff changed since the version a
// reviewer saw is not frozen.
func TestFreezeStaleVersion(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	th, _ := db.CreateThread(ctx, store.ThreadCreate{Title: "t"})
	h, _ := db.EnsureHandoff(ctx, th.ID)
	_, ch, err := db.CreateDecision(ctx, h.ID, store.DecisionCreate{Content: "Use SQLite."}, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := ch.Version
	if _, _, err := db.CreateDecision(ctx, h.ID, store.DecisionCreate{Content: "Use Postgres."}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Freeze(ctx, h.ID, seen); !errors.Is(err, store.ErrStaleVersion) {
		t.Fatalf("freeze at a stale version: err=%v, want a VersionConflict", err)
	}
	if _, err := db.Freeze(ctx, h.ID, seen+1); err != nil {
		t.Fatalf("freeze at the current version: %v", err)
	}
}
