package envelope

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/baton-dev/baton/store"
)

// Options are what validation may look up beyond the envelope itself.
// Every field may be nil.
type Options struct {
	// Bundle reports whether the export the envelope came in holds a file
	// at path (relative to the bundle's root).
	Bundle func(path string) bool
	// Artifact reports whether Baton keeps the artifact at path for e:
	// for a plan envelope, the file its plan exports as.
	Artifact func(e *Envelope, path string) bool
	// Snapshot returns the frozen snapshot with the given ID, so that a
	// brainstorm handoff's or a plan's IDs and counts are checked against
	// it; false when Baton has no such snapshot, which skips those checks.
	Snapshot func(id string) (*store.Snapshot, bool)
}

// Check decodes data (Decode) and validates the envelope (Validate); the
// envelope is nil when it has problems.
func Check(data []byte, opts Options) (*Envelope, Problems) {
	e, ps := Decode(data)
	if len(ps) > 0 {
		return nil, ps
	}
	if ps := Validate(e, opts); len(ps) > 0 {
		return nil, ps
	}
	return e, nil
}

var (
	uuidRE  = regexp.MustCompile(`^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$`)
	shaRE   = regexp.MustCompile(`^[0-9a-f]{64}$`)
	labelRE = regexp.MustCompile(`^D[1-9][0-9]*$`)
	// versionRE is the schema's pattern of handoff_version.
	versionRE = regexp.MustCompile(`^1\.(0|[1-9][0-9]*)$`)
)

// Validate checks an envelope against the contract's rules and returns
// each one it breaks, named by its JSON path: required fields that are
// empty, values outside their enums, summary-like fields over
// MaxSummaryLen characters, paths that are absolute or climb out (..),
// artifacts that are neither in the bundle nor kept by Baton, and
// consistency: the slug derived from product_name, labels D1…Dn in order,
// unique IDs, counts that add up, the sha256 of a snapshot, and IDs and
// counts that agree with the snapshot when opts can find it.
func Validate(e *Envelope, opts Options) Problems {
	c := &checker{opts: opts}
	c.envelope(e)
	return c.ps
}

type checker struct {
	ps   Problems
	opts Options
}

// loc is the JSON path of a value being checked: base, then [index] when
// index is not negative, then field (".content"). The checker writes it
// out only for a problem.
type loc struct {
	base  string
	index int
	field string
}

// jsonPath is the path p.
func jsonPath(p string) loc { return loc{base: p, index: -1} }

// item is the path base[i].
func item(base string, i int) loc { return loc{base: base, index: i} }

// dot is the path of the member f of l's value: f starts with a dot.
func (l loc) dot(f string) loc {
	l.field = f
	return l
}

func (l loc) String() string {
	if l.index < 0 {
		return l.base + l.field
	}
	return l.base + "[" + strconv.Itoa(l.index) + "]" + l.field
}

func (c *checker) add(at loc, format string, args ...any) { c.ps.add(at.String(), format, args...) }

// text checks a string's length in characters (not bytes), from min to
// max. It counts the characters only when the bytes do not settle it.
func (c *checker) text(at loc, s string, min, max int) {
	switch {
	case min > 0 && strings.TrimSpace(s) == "":
		c.add(at, "required, and may not be empty")
	case len(s) < utf8.UTFMax*min || max > 0 && len(s) > max:
		// A string has from len/UTFMax to len characters: counting
		// them can change the verdict only here.
		n := utf8.RuneCountInString(s)
		switch {
		case n < min:
			c.add(at, "is %d characters long; write at least %d", n, min)
		case max > 0 && n > max:
			c.add(at, "is %d characters long; keep it to %d", n, max)
		}
	}
}

func (c *checker) uuid(at loc, s string) {
	if !uuidRE.MatchString(s) {
		c.add(at, "%q is not a UUID (8-4-4-4-12 hex digits)", cut(s))
	}
}

func (c *checker) oneOf(at loc, s string, allowed ...string) {
	if !slices.Contains(allowed, s) {
		c.add(at, "%q is not one of %s", cut(s), strings.Join(allowed, ", "))
	}
}

// path checks a relative path inside a project or bundle, by the store's
// rules (store.CleanPath), written as the store writes it.
func (c *checker) path(at loc, p Path) {
	if strings.TrimSpace(string(p)) == "" {
		c.add(at, "required, and may not be empty")
		return
	}
	clean, ok := store.CleanPath(string(p))
	switch {
	case !ok:
		c.add(at, "%q is not a safe relative path: no leading / or ~, drive letters, . or .. segments, backslashes, colons, %% or white space", cut(string(p)))
	case clean != string(p):
		c.add(at, "write %q as %q", cut(string(p)), clean)
	}
}

func (c *checker) uniqueIDs(path string, ids []string) {
	seen := make(map[string]int, len(ids))
	for i, id := range ids {
		c.text(item(path, i), id, 1, 100)
		if j, dup := seen[id]; dup {
			c.add(item(path, i), "repeats %s[%d]", path, j)
		}
		seen[id] = i
	}
}

func (c *checker) envelope(e *Envelope) {
	if !versionRE.MatchString(e.HandoffVersion) {
		c.add(jsonPath("handoff_version"), "%q is not a 1.x version", cut(e.HandoffVersion))
	}
	if e.Timestamp.IsZero() {
		c.add(jsonPath("timestamp"), "required")
	}
	c.uuid(jsonPath("session_id"), e.SessionID)
	c.text(jsonPath("product_name"), e.ProductName, 1, 200)
	if want := Slug(e.ProductName); e.ProductNameSlug != want {
		c.add(jsonPath("product_name_slug"), "is %q, but product_name %q gives %q", cut(e.ProductNameSlug), cut(e.ProductName), want)
	}
	c.agentType(jsonPath("source_agent.agent_type"), e.SourceAgent.AgentType)
	c.text(jsonPath("source_agent.phase_completed"), e.SourceAgent.PhaseCompleted, 1, MaxSummaryLen)
	if e.SourceAgent.ExecutionTimeMS < 0 {
		c.add(jsonPath("source_agent.execution_time_ms"), "is %d; it may not be negative", e.SourceAgent.ExecutionTimeMS)
	}
	c.agentType(jsonPath("target_agent.agent_type"), e.TargetAgent.AgentType)
	c.text(jsonPath("target_agent.phase_to_execute"), e.TargetAgent.PhaseToExecute, 1, MaxSummaryLen)
	c.artifacts(e)
	c.workflow(&e.WorkflowState)

	switch p := &e.Payload; {
	case p.BrainstormHandoff != nil:
		c.brainstorm(p.BrainstormHandoff)
	case p.Plan != nil:
		c.plan(p.Plan)
	case p.AgentHandoff != nil:
		c.agentHandoff(p.AgentHandoff)
	case p.Error != nil:
		c.failure(p.Error)
	case e.SourceAgent.AgentType.batonOnly():
		c.add(jsonPath("payload.type"), "a %s envelope carries one of Baton's payloads: %s", e.SourceAgent.AgentType, kindList())
	case len(p.Raw) == 0:
		c.add(jsonPath("payload"), "required, missing")
	}
}

func kindList() string {
	s := make([]string, len(Kinds))
	for i, k := range Kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

func (c *checker) agentType(at loc, t AgentType) {
	if !slices.Contains(AgentTypes, t) {
		names := make([]string, len(AgentTypes))
		for i, a := range AgentTypes {
			names[i] = string(a)
		}
		c.oneOf(at, string(t), names...)
	}
}

func (c *checker) artifacts(e *Envelope) {
	for i, a := range e.Artifacts.Created {
		at := item("artifacts.created", i)
		c.oneOf(at.dot(".type"), string(a.Type), string(ArtifactMarkdown), string(ArtifactHTML), string(ArtifactJSON))
		c.text(at.dot(".description"), a.Description, 0, MaxSummaryLen)
		before := len(c.ps)
		c.path(at.dot(".path"), a.Path)
		if len(c.ps) > before {
			continue
		}
		inBundle := c.opts.Bundle != nil && c.opts.Bundle(string(a.Path))
		kept := c.opts.Artifact != nil && c.opts.Artifact(e, string(a.Path))
		if !inBundle && !kept {
			c.add(at.dot(".path"), "%s is not in the bundle, and Baton keeps no such artifact", a.Path)
		}
	}
	for i, p := range e.Artifacts.Referenced {
		c.path(item("artifacts.referenced", i), p)
	}
}

func (c *checker) workflow(w *WorkflowState) {
	c.oneOf(jsonPath("workflow_state.execution_mode"), string(w.ExecutionMode), string(FullApproval), string(Streamlined))
	if w.ProgressPercentage < 0 || w.ProgressPercentage > 100 {
		c.add(jsonPath("workflow_state.progress_percentage"), "is %g; it goes from 0 to 100", w.ProgressPercentage)
	}
	for i, p := range w.PhasesCompleted {
		c.text(item("workflow_state.phases_completed", i), p, 1, MaxSummaryLen)
	}
	for i, p := range w.PhasesRemaining {
		c.text(item("workflow_state.phases_remaining", i), p, 1, MaxSummaryLen)
	}
}

var (
	sources = []string{string(store.SourceAI), string(store.SourcePinned), string(store.SourceEdited)}
	levels  = []string{string(store.LevelHigh), string(store.LevelMedium), string(store.LevelLow)}
)

func (c *checker) brainstorm(b *BrainstormHandoff) {
	c.uuid(jsonPath("payload.snapshot_id"), b.SnapshotID)
	if !shaRE.MatchString(b.SHA256) {
		c.add(jsonPath("payload.sha256"), "%q is not a sha256: 64 lowercase hex digits", cut(b.SHA256))
	}
	c.text(jsonPath("payload.handoff_id"), b.HandoffID, 1, 100)
	c.text(jsonPath("payload.thread_id"), b.ThreadID, 1, 100)
	if b.FrozenAt.IsZero() {
		c.add(jsonPath("payload.frozen_at"), "required")
	}
	c.text(jsonPath("payload.summary"), b.Summary, 0, MaxSummaryLen)

	ids := make([]string, len(b.Decisions))
	for i, d := range b.Decisions {
		at := item("payload.decisions", i)
		ids[i] = d.ID
		if !isLabel(d.Label, i+1) {
			c.add(at.dot(".label"), "is %q; decisions are labelled in order, so this one is D%d", cut(d.Label), i+1)
		}
		c.text(at.dot(".content"), d.Content, 1, MaxTextLen)
		c.oneOf(at.dot(".source"), d.Source, sources...)
		if d.Confidence != nil && (*d.Confidence < 0 || *d.Confidence > 1) {
			c.add(at.dot(".confidence"), "is %g; it goes from 0 to 1", *d.Confidence)
		}
	}
	c.uniqueIDs("payload.decisions[*].id", ids)
	ids = make([]string, len(b.FilesReferenced))
	for i, f := range b.FilesReferenced {
		at := item("payload.files_referenced", i)
		ids[i] = f.ID
		c.path(at.dot(".path"), f.Path)
		c.oneOf(at.dot(".relevance"), f.Relevance, levels...)
		c.text(at.dot(".context"), f.Context, 0, MaxTextLen)
	}
	c.uniqueIDs("payload.files_referenced[*].id", ids)
	ids = make([]string, len(b.Risks))
	for i, r := range b.Risks {
		at := item("payload.risks", i)
		ids[i] = r.ID
		c.text(at.dot(".description"), r.Description, 1, MaxTextLen)
		c.oneOf(at.dot(".severity"), r.Severity, levels...)
		c.text(at.dot(".mitigation"), r.Mitigation, 0, MaxTextLen)
	}
	c.uniqueIDs("payload.risks[*].id", ids)

	if sum := b.ComputeSHA256(); shaRE.MatchString(b.SHA256) && sum != b.SHA256 {
		c.add(jsonPath("payload.sha256"), "does not match the snapshot's content (its sha256 is %s): the decisions, files, risks or summary were changed after freezing", sum)
	}
	if c.opts.Snapshot == nil {
		return
	}
	sn, ok := c.opts.Snapshot(b.SnapshotID)
	if !ok {
		return
	}
	if sn.SHA256 != b.SHA256 {
		c.add(jsonPath("payload.sha256"), "is not the sha256 of snapshot %s (%s)", sn.ID, sn.SHA256)
	}
	if got, want := len(b.Decisions), len(sn.Payload.Decisions); got != want {
		c.add(jsonPath("payload.decisions"), "lists %d decisions; snapshot %s has %d", got, sn.ID, want)
	}
	for i, d := range b.Decisions {
		if i < len(sn.Payload.Decisions) && sn.Payload.Decisions[i].ID != d.ID {
			c.add(item("payload.decisions", i).dot(".id"), "is %q; %s of snapshot %s is %q", cut(d.ID), d.Label, sn.ID, sn.Payload.Decisions[i].ID)
		}
	}
}

// isLabel reports whether s is the label of the nth decision: D<n>.
func isLabel(s string, n int) bool {
	var buf [24]byte
	return s == string(strconv.AppendInt(append(buf[:0], 'D'), int64(n), 10))
}

// SnapshotPayload returns the frozen snapshot the payload describes, as
// the store encodes it.
func (b *BrainstormHandoff) SnapshotPayload() *store.SnapshotPayload {
	p := &store.SnapshotPayload{HandoffID: b.HandoffID, ThreadID: b.ThreadID, Summary: b.Summary, FrozenAt: b.FrozenAt,
		Decisions: make([]store.SnapshotDecision, len(b.Decisions)), FilesReferenced: make([]store.SnapshotFile, len(b.FilesReferenced)),
		Risks: make([]store.SnapshotRisk, len(b.Risks))}
	for i, d := range b.Decisions {
		ids := d.MessageIDs
		if ids == nil {
			ids = []string{}
		}
		p.Decisions[i] = store.SnapshotDecision{Label: d.Label, ID: d.ID, Content: d.Content, Source: store.Source(d.Source),
			Confidence: d.Confidence, MessageIDs: ids}
	}
	for i, f := range b.FilesReferenced {
		p.FilesReferenced[i] = store.SnapshotFile{ID: f.ID, Path: string(f.Path), Relevance: store.Level(f.Relevance), Context: f.Context}
	}
	for i, r := range b.Risks {
		p.Risks[i] = store.SnapshotRisk{ID: r.ID, Description: r.Description, Severity: store.Level(r.Severity), Mitigation: r.Mitigation}
	}
	return p
}

// ComputeSHA256 is the hex sha256 of the snapshot's canonical JSON, as the
// store computes it when it freezes a handoff.
func (b *BrainstormHandoff) ComputeSHA256() string {
	buf := snapshotBufs.Get().(*[]byte)
	defer snapshotBufs.Put(buf)
	if cap(*buf) < 2*snapshotChunk {
		*buf = make([]byte, 0, 2*snapshotChunk)
	}
	h := sha256.New()
	data, err := b.writeSnapshotJSON(h, (*buf)[:0])
	if err != nil {
		return ""
	}
	*buf = data
	return hex.EncodeToString(h.Sum(nil))
}

// snapshotBufs keeps the buffers ComputeSHA256 encodes snapshots into, so
// that validating one does not allocate again.
var snapshotBufs = sync.Pool{New: func() any { return new([]byte) }}

func (c *checker) plan(p *Plan) {
	c.text(jsonPath("payload.plan_id"), p.PlanID, 1, 100)
	c.uuid(jsonPath("payload.snapshot_id"), p.SnapshotID)
	if p.Version < 1 {
		c.add(jsonPath("payload.version"), "is %d; plans are numbered from 1", p.Version)
	}
	c.text(jsonPath("payload.markdown"), p.Markdown, 1, 0)
	cov := &p.Coverage
	seen := map[string]string{}
	for _, l := range []struct {
		path   string
		labels []string
	}{{"payload.coverage.covered", cov.Covered}, {"payload.coverage.uncovered", cov.Uncovered}} {
		for i, label := range l.labels {
			at := item(l.path, i)
			if !labelRE.MatchString(label) {
				c.add(at, "%q is not a decision label such as D1", cut(label))
			}
			if prev, dup := seen[label]; dup {
				c.add(at, "%s is already listed in %s", label, prev)
			}
			seen[label] = l.path
		}
	}
	if n := len(cov.Covered) + len(cov.Uncovered); cov.Total != n {
		c.add(jsonPath("payload.coverage.total"), "is %d, but covered and uncovered list %d labels", cov.Total, n)
	}
	if c.opts.Snapshot == nil {
		return
	}
	sn, ok := c.opts.Snapshot(p.SnapshotID)
	if !ok {
		return
	}
	if want := len(sn.Payload.Decisions); cov.Total != want {
		c.add(jsonPath("payload.coverage.total"), "is %d; snapshot %s has %d decisions", cov.Total, sn.ID, want)
	}
	for label, list := range seen {
		if _, ok := sn.Payload.DecisionByLabel(label); !ok {
			c.add(jsonPath(list), "%s is not a decision of snapshot %s", label, sn.ID)
		}
	}
}

// summaryPrefixes are the kinds of a context snapshot's summaries, with
// the most of each it carries.
var summaryPrefixes = []struct {
	prefix string
	max    int
}{{"Decision: ", 5}, {"Warning: ", 3}, {"Finding: ", 3}}

func (c *checker) agentHandoff(a *AgentHandoff) {
	c.text(jsonPath("payload.handoff_id"), a.HandoffID, 1, 100)
	c.text(jsonPath("payload.source_agent_id"), a.SourceAgentID, 1, 100)
	c.text(jsonPath("payload.target_agent_id"), a.TargetAgentID, 0, 100)
	if a.Scope != "" && a.Scope != "project" {
		if _, ok := store.CleanPath(a.Scope); !ok {
			c.add(jsonPath("payload.scope"), "%q is neither project nor a safe relative path prefix such as src/auth/", cut(a.Scope))
		}
	}
	c.text(jsonPath("payload.summary"), a.Summary, 1, MaxSummaryLen)
	cs := &a.ContextSnapshot
	c.uniqueIDs("payload.context_snapshot.decision_ids", cs.DecisionIDs)
	c.uniqueIDs("payload.context_snapshot.warning_ids", cs.WarningIDs)
	c.uniqueIDs("payload.context_snapshot.finding_ids", cs.FindingIDs)
	counts := make([]int, len(summaryPrefixes))
	for i, s := range cs.Summaries {
		at := item("payload.context_snapshot.summaries", i)
		c.text(at, s, 1, MaxSummaryLen)
		k := slices.IndexFunc(summaryPrefixes, func(p struct {
			prefix string
			max    int
		}) bool {
			return strings.HasPrefix(s, p.prefix)
		})
		if k < 0 {
			c.add(at, `starts with "Decision: ", "Warning: " or "Finding: "`)
			continue
		}
		counts[k]++
	}
	for k, ids := range [][]string{cs.DecisionIDs, cs.WarningIDs, cs.FindingIDs} {
		p := summaryPrefixes[k]
		name := strings.ToLower(strings.TrimSuffix(p.prefix, ": "))
		if counts[k] > p.max {
			c.add(jsonPath("payload.context_snapshot.summaries"), "has %d %s summaries; at most %d", counts[k], name, p.max)
		}
		if counts[k] > len(ids) {
			c.add(jsonPath("payload.context_snapshot.summaries"), "has %d %s summaries for %d %s IDs", counts[k], name, len(ids), name)
		}
	}
}

var errorCodes = []string{string(ResearchFailed), string(GenerationFailed), string(ValidationFailed), string(UserCancelled)}

func (c *checker) failure(f *Failure) {
	c.oneOf(jsonPath("payload.code"), string(f.Code), errorCodes...)
	c.text(jsonPath("payload.message"), f.Message, 1, MaxSummaryLen)
	for i, s := range f.RecoverySuggestions {
		c.text(item("payload.recovery_suggestions", i), s, 1, MaxSummaryLen)
	}
	c.text(jsonPath("payload.plan_id"), f.PlanID, 0, 100)
	if f.SnapshotID != "" {
		c.uuid(jsonPath("payload.snapshot_id"), f.SnapshotID)
	}
}

// Slug turns a product name into its product_name_slug: letters and digits
// kept as they are, every other run of characters one underscore, none at
// either end; "untitled" when nothing is left.
func Slug(name string) string {
	var b strings.Builder
	gap := false
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			gap = true
			continue
		}
		if gap && b.Len() > 0 {
			b.WriteByte('_')
		}
		gap = false
		b.WriteRune(r)
	}
	if b.Len() == 0 {
		return "untitled"
	}
	return b.String()
}

// cut shortens a value quoted in a problem.
func cut(s string) string {
	if utf8.RuneCountInString(s) <= 60 {
		return s
	}
	return string([]rune(s)[:59]) + "…"
}

// String names the envelope in messages: "plan envelope from planner to coder".
func (e *Envelope) String() string {
	k := string(e.Payload.Kind())
	if k == "" {
		k = "pass-through"
	}
	return fmt.Sprintf("%s envelope from %s to %s", k, e.SourceAgent.AgentType, e.TargetAgent.AgentType)
}
