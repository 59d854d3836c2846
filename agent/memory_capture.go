package agent

import (
	"context"
	"fmt"
	"path"
	"strings"
	"unicode"

	"github.com/baton-dev/baton/store"
)

// ProjectScope is the scope of a decision that concerns no file, or files
// with no directory in common; the store keeps it as store.ProjectScope.
const ProjectScope = store.ProjectScope

// LowConfidence is the confidence below which a decision is not kept as a
// learning and never supersedes another decision.
const LowConfidence = 0.5

// MaxJudgeCandidates is how many earlier active decisions of the same scope
// CaptureSnapshot asks the judge about, per new decision, most recent first.
const MaxJudgeCandidates = 10

// Judge reports whether decision new reverses decision old, an earlier
// active decision of the same scope. new is the decision as it will be
// recorded; its ID is empty when it makes a new record. An error stops the
// capture (a cancelled context, say); a judge that cannot tell should
// answer false, or fall back to a rule, rather than fail.
type Judge func(ctx context.Context, old, new store.DecisionRecord) (bool, error)

// MemoryWriter is what CaptureSnapshot needs of the store.
type MemoryWriter interface {
	FindCaptureState(ctx context.Context, sn *store.Snapshot, workspaceID string) (*store.CaptureState, error)
	FindDecisionRecords(ctx context.Context, f store.DecisionRecordFilter) ([]*store.DecisionRecord, error)
	WriteMemoryCapture(ctx context.Context, c store.MemoryCapture) (store.CaptureResult, error)
}

// CaptureSnapshot turns a frozen snapshot into workspace memory, as
// NewMemoryCapture describes, and has the store write it in one
// transaction.
//
// A decision that is new, or whose content changed since its handoff was
// last frozen, and whose confidence is not below LowConfidence, is compared
// with up to MaxJudgeCandidates earlier active records of the same scope:
// each that judge says it reverses becomes superseded by it. A nil judge
// supersedes nothing. The judge runs before the write, so a slow model
// never holds the database's write lock; a judge error stops the capture
// and nothing is written.
//
// Capturing a snapshot again changes nothing and returns AlreadyCaptured.
// Freezing the same handoff again updates its records instead of adding
// new ones, and a decision whose text equals an active record's (ignoring
// case) counts as that record. workspaceID may be empty (the handoff's
// workspace); otherwise it must be the handoff's workspace, else
// store.ErrInvalid.
func CaptureSnapshot(ctx context.Context, db MemoryWriter, sn *store.Snapshot, workspaceID string, judge Judge) (store.CaptureResult, error) {
	st, err := db.FindCaptureState(ctx, sn, workspaceID)
	if err != nil {
		return store.CaptureResult{}, fmt.Errorf("capture snapshot: %w", err)
	}
	if st.Captured {
		return store.CaptureResult{SnapshotID: sn.ID, AlreadyCaptured: true}, nil
	}
	c := NewMemoryCapture(sn, st.WorkspaceID)
	if judge != nil {
		if err := judgeCapture(ctx, db, &c, st, judge); err != nil {
			return store.CaptureResult{SnapshotID: sn.ID}, fmt.Errorf("capture snapshot %s: %w", sn.ID, err)
		}
	}
	res, err := db.WriteMemoryCapture(ctx, c)
	if err != nil {
		return res, fmt.Errorf("capture snapshot: %w", err)
	}
	return res, nil
}

// judgeCapture asks judge about each changed, confident decision of c and
// the latest active records of its scope, and records what it reverses.
func judgeCapture(ctx context.Context, db MemoryWriter, c *store.MemoryCapture, st *store.CaptureState, judge Judge) error {
	own := map[string]bool{} // records this capture writes
	for _, t := range st.Targets {
		if t.Existing != nil {
			own[t.Existing.ID] = true
		}
	}
	p := &c.Snapshot.Payload
	for i, d := range p.Decisions {
		if i >= len(st.Targets) || !st.Targets[i].Changed || (d.Confidence != nil && *d.Confidence < LowConfidence) {
			continue
		}
		cd := &c.Decisions[i]
		cands, err := db.FindDecisionRecords(ctx, store.DecisionRecordFilter{WorkspaceID: c.WorkspaceID, Scope: cd.Scope,
			ExactScope: true, Status: store.DecisionActive, Limit: MaxJudgeCandidates + len(p.Decisions)})
		if err != nil {
			return err
		}
		neu := store.DecisionRecord{WorkspaceID: c.WorkspaceID, HandoffID: c.Snapshot.HandoffID, SnapshotID: c.Snapshot.ID,
			ThreadID: p.ThreadID, DecisionID: d.ID, Label: d.Label, Content: d.Content, Scope: cd.Scope,
			Status: store.DecisionActive, Confidence: d.Confidence, MessageIDs: d.MessageIDs}
		if ex := st.Targets[i].Existing; ex != nil {
			neu.ID, neu.CreatedAt = ex.ID, ex.CreatedAt
		}
		asked := 0
		for _, old := range cands {
			if own[old.ID] || asked == MaxJudgeCandidates {
				continue
			}
			asked++
			if err := ctx.Err(); err != nil {
				return err
			}
			rev, err := judge(ctx, *old, neu)
			if err != nil {
				return fmt.Errorf("judge %q against %q: %w", d.Content, old.Content, err)
			}
			if rev {
				cd.Reverses = append(cd.Reverses, old.ID)
			}
		}
	}
	return nil
}

// NewMemoryCapture says what a frozen snapshot teaches the workspace
// memory, supersessions aside (CaptureSnapshot asks its judge for those):
//   - each decision's scope: DecisionScope of the files it concerns;
//   - learnings: each decision unless its confidence is below
//     LowConfidence, each file with its reason, each risk with its
//     mitigation;
//   - edges: decision→file where the decision concerns the file,
//     file→risk where the risk names the file, decision→risk where the
//     risk concerns the decision or one of its files.
//
// A decision concerns a file when it names the file, when the file's reason
// cites the decision's label (D2), or when the two share two subject words
// (Terms of four letters or more).
func NewMemoryCapture(sn *store.Snapshot, workspaceID string) store.MemoryCapture {
	p := &sn.Payload
	c := store.MemoryCapture{Snapshot: sn, WorkspaceID: workspaceID}
	fileRisks := make([][]int, len(p.FilesReferenced))
	var fileEdges []store.Relationship
	for j, f := range p.FilesReferenced {
		for k, r := range p.Risks {
			if riskNamesFile(r, f.Path) {
				fileRisks[j] = append(fileRisks[j], k)
				fileEdges = append(fileEdges, store.Relationship{Type: store.RelFileRisk, Source: f.Path, Target: riskKey(r)})
			}
		}
	}
	c.Relationships = fileEdges
	for _, d := range p.Decisions {
		var paths []string
		linked := map[int]bool{}
		for j, f := range p.FilesReferenced {
			if !decisionConcernsFile(d, f) {
				continue
			}
			paths = append(paths, f.Path)
			c.Relationships = append(c.Relationships, store.Relationship{Type: store.RelDecisionFile, Source: d.ID, Target: f.Path})
			for _, k := range fileRisks[j] {
				linked[k] = true
			}
		}
		for k, r := range p.Risks {
			if linked[k] || riskConcernsDecision(r, d) {
				c.Relationships = append(c.Relationships, store.Relationship{Type: store.RelDecisionRisk, Source: d.ID, Target: riskKey(r)})
			}
		}
		scope := DecisionScope(paths)
		c.Decisions = append(c.Decisions, store.CapturedDecision{DecisionID: d.ID, Scope: scope})
		if d.Confidence == nil || *d.Confidence >= LowConfidence {
			c.Learnings = append(c.Learnings, store.Learning{Kind: store.LearningDecision, Content: d.Content, Scope: scope})
		}
	}
	for _, f := range p.FilesReferenced {
		c.Learnings = append(c.Learnings, store.Learning{Kind: store.LearningFile, Content: f.Context, Level: f.Relevance, Path: f.Path})
	}
	for _, r := range p.Risks {
		c.Learnings = append(c.Learnings, store.Learning{Kind: store.LearningRisk, Content: r.Description, Detail: r.Mitigation, Level: r.Severity})
	}
	return c
}

// DecisionScope is the scope of a decision that concerns paths: their
// deepest common directory ("src/auth" for src/auth/jwt.ts and
// src/auth/session.ts), or ProjectScope when there is no path or no
// directory they share.
func DecisionScope(paths []string) string {
	var common []string
	for i, p := range paths {
		dir := path.Dir(strings.Trim(p, "/"))
		if dir == "." || dir == "" {
			return ProjectScope
		}
		segs := strings.Split(dir, "/")
		if i == 0 {
			common = segs
			continue
		}
		n := 0
		for n < len(common) && n < len(segs) && common[n] == segs[n] {
			n++
		}
		common = common[:n]
		if n == 0 {
			return ProjectScope
		}
	}
	if len(common) == 0 {
		return ProjectScope
	}
	return strings.Join(common, "/")
}

// MentionsFile reports whether text names the file at p: its path, or its
// base name as a word of its own (jwt.ts, not myjwt.ts). Case is ignored.
func MentionsFile(text, p string) bool {
	lt, lp := strings.ToLower(text), strings.ToLower(p)
	if lp == "" {
		return false
	}
	if strings.Contains(lt, lp) {
		return true
	}
	base := path.Base(lp)
	for i := 0; ; {
		j := strings.Index(lt[i:], base)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(base)
		before := start == 0 || !isNameByte(lt[start-1])
		after := end == len(lt) || !isNameByte(lt[end]) || (lt[end] == '.' && (end+1 == len(lt) || !isNameByte(lt[end+1])))
		if before && after {
			return true
		}
		i = start + 1
	}
}

func isNameByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '_' || b == '-' || b == '.' || b >= 0x80
}

// refersToLabel reports whether text cites a decision label such as D2 as a word.
func refersToLabel(text, label string) bool {
	if label == "" {
		return false
	}
	for i := 0; ; {
		j := strings.Index(text[i:], label)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(label)
		if (start == 0 || !isWordRune(rune(text[start-1]))) && (end == len(text) || !isWordRune(rune(text[end]))) {
			return true
		}
		i = start + 1
	}
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }

// decisionConcernsFile reports whether the snapshot ties a decision to a
// file: the decision names the file, the file's reason cites the decision's
// label, or the two share at least two subject words.
func decisionConcernsFile(d store.SnapshotDecision, f store.SnapshotFile) bool {
	return MentionsFile(d.Content, f.Path) || refersToLabel(f.Context, d.Label) ||
		sharedSubjectWords(d.Content, f.Context) >= 2
}

// riskNamesFile reports whether a risk or its mitigation names the file.
func riskNamesFile(r store.SnapshotRisk, p string) bool {
	return MentionsFile(r.Description, p) || MentionsFile(r.Mitigation, p)
}

// riskConcernsDecision reports whether a risk cites the decision's label or
// shares at least two subject words with it.
func riskConcernsDecision(r store.SnapshotRisk, d store.SnapshotDecision) bool {
	return refersToLabel(r.Description, d.Label) || refersToLabel(r.Mitigation, d.Label) ||
		sharedSubjectWords(d.Content, r.Description) >= 2
}

// riskKey is how a risk is named in the graph: its description on one line.
func riskKey(r store.SnapshotRisk) string { return strings.Join(strings.Fields(r.Description), " ") }

// captureSubjects are the terms of text that relate it to another in a
// capture: Terms of four letters or more.
func captureSubjects(text string) map[string]bool {
	out := map[string]bool{}
	for _, t := range Terms(text) {
		if len(t) >= 4 {
			out[t] = true
		}
	}
	return out
}

func sharedSubjectWords(a, b string) int {
	wa, wb := captureSubjects(a), captureSubjects(b)
	n := 0
	for w := range wa {
		if wb[w] {
			n++
		}
	}
	return n
}
