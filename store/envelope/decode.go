package envelope

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/baton-dev/baton/store"
)

// Problem is one rule an envelope breaks, at a JSON path such as
// payload.decisions[2].content ("" for the envelope as a whole).
type Problem struct {
	Path    string
	Message string
}

// String says "path: message".
func (p Problem) String() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// Problems are the rules an envelope breaks, in document order.
type Problems []Problem

// Error lists the problems, one a line.
func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Err returns nil when there are no problems, else an EINVALID
// *store.Error whose message names the first few.
func (ps Problems) Err() error {
	if len(ps) == 0 {
		return nil
	}
	const shown = 5
	lines := make([]string, 0, shown+1)
	for i, p := range ps {
		if i == shown {
			lines = append(lines, fmt.Sprintf("and %d more.", len(ps)-shown))
			break
		}
		lines = append(lines, p.String())
	}
	return store.Errorf(store.EINVALID, "The envelope is not valid: %s", strings.Join(lines, "; "))
}

func (ps *Problems) add(path, format string, args ...any) {
	*ps = append(*ps, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

// Decode reads an envelope. It refuses, with problems named by their JSON
// path: more than MaxBytes, text that is not JSON, a handoff_version whose
// major is not 1, values of the wrong JSON type, and required fields that
// are missing or null. Fields it does not know are kept in the objects'
// Extra. Decode checks the shape only; Validate checks the rules.
//
// The envelope's strings share one copy of data, made once, so that
// reading them allocates nothing more.
func Decode(data []byte) (*Envelope, Problems) {
	var ps Problems
	if len(data) > MaxBytes {
		ps.add("", "the envelope is %s; the limit is %s", size(len(data)), size(MaxBytes))
		return nil, ps
	}
	t, serr := parse(data)
	if serr != nil {
		line, col := position(data, serr.offset)
		ps.add("", "not valid JSON at line %d, column %d: %s", line, col, serr.msg)
		return nil, ps
	}
	defer t.release() // the envelope's strings are in t.src, which is not reused
	root := &t.root
	if root.kind != '{' {
		ps.add("", "is %s, want an object", nodeKind(root))
		return nil, ps
	}
	if p := checkVersion(t, t.member(root, "handoff_version")); p != nil {
		return nil, Problems{*p}
	}
	e := new(Envelope)
	d := &decoder{t: t, path: make([]step, 0, 8)}
	d.envelope(root, e)
	if len(d.ps) > 0 {
		return nil, d.ps
	}
	return e, nil
}

// UnmarshalJSON reads an envelope as Decode does, returning its problems
// as the error.
func (e *Envelope) UnmarshalJSON(data []byte) error {
	got, ps := Decode(data)
	if len(ps) > 0 {
		return ps
	}
	*e = *got
	return nil
}

func position(data []byte, offset int) (line, col int) {
	offset = min(offset, len(data))
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = offset - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// checkVersion refuses a handoff_version this package cannot read.
func checkVersion(t *tree, n *node) *Problem {
	if n == nil || n.kind != '"' {
		return &Problem{Path: "handoff_version", Message: `required: a string such as "1.0"`}
	}
	v := t.str(n)
	major, minor, ok := strings.Cut(v, ".")
	m, err1 := strconv.Atoi(major)
	_, err2 := strconv.Atoi(minor)
	if !ok || err1 != nil || err2 != nil || m < 0 {
		return &Problem{Path: "handoff_version", Message: fmt.Sprintf(`%q is not a version: write major.minor, such as "1.0"`, cut(v))}
	}
	if m != Major {
		return &Problem{Path: "handoff_version", Message: fmt.Sprintf(
			"version %s is not supported: this Baton reads handoff envelopes 1.x; export the envelope as 1.x, or upgrade Baton", v)}
	}
	return nil
}

// decoder reads the nodes of an envelope into its Go types, typed field
// by field, and collects the problems it finds. It keeps the path to the
// value it is reading as a stack of steps and writes the path out only
// when it reports a problem, so that reading a valid envelope builds no
// path strings.
type decoder struct {
	t    *tree
	ps   Problems
	path []step
}

// step is one step of a JSON path: a member name, or an index when name
// is "" (no field of an envelope type has an empty name).
type step struct {
	name  string
	index int
}

// at is the path being read, as Problem.Path writes it:
// payload.decisions[2].content.
func (d *decoder) at() string {
	var b []byte
	for _, s := range d.path {
		if s.name == "" {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(s.index), 10)
			b = append(b, ']')
			continue
		}
		if len(b) > 0 {
			b = append(b, '.')
		}
		b = append(b, s.name...)
	}
	return string(b)
}

func (d *decoder) problem(format string, args ...any) { d.ps.add(d.at(), format, args...) }

// wrong reports that n is not of the JSON type want names.
func (d *decoder) wrong(n *node, want string) { d.problem("is %s, want %s", nodeKind(n), want) }

// field is a field of an envelope type as the decoder reads it: its JSON
// name, and whether it is required (no omitempty: present and not null),
// the rule the schema generator follows. The tables below list each type's
// fields in the order of its struct; a test checks them against the
// types' json tags.
type field struct {
	name     string
	required bool
}

var (
	envelopeFields          = []field{{"handoff_version", true}, {"timestamp", true}, {"session_id", true}, {"product_name", true}, {"product_name_slug", true}, {"source_agent", true}, {"target_agent", true}, {"artifacts", true}, {"payload", true}, {"workflow_state", true}}
	sourceAgentFields       = []field{{"agent_type", true}, {"phase_completed", true}, {"execution_time_ms", true}}
	targetAgentFields       = []field{{"agent_type", true}, {"phase_to_execute", true}}
	artifactsFields         = []field{{"created", true}, {"referenced", true}}
	artifactFields          = []field{{"type", true}, {"path", true}, {"description", true}}
	workflowStateFields     = []field{{"is_ai_ml_product", true}, {"execution_mode", true}, {"phases_completed", true}, {"phases_remaining", true}, {"progress_percentage", true}}
	brainstormHandoffFields = []field{{"type", true}, {"snapshot_id", true}, {"sha256", true}, {"handoff_id", true}, {"thread_id", true}, {"frozen_at", true}, {"summary", true}, {"decisions", true}, {"files_referenced", true}, {"risks", true}}
	decisionFields          = []field{{"id", true}, {"label", true}, {"content", true}, {"source", true}, {"confidence", false}, {"message_ids", true}}
	fileFields              = []field{{"id", true}, {"path", true}, {"relevance", true}, {"context", true}}
	riskFields              = []field{{"id", true}, {"description", true}, {"severity", true}, {"mitigation", false}}
	planFields              = []field{{"type", true}, {"plan_id", true}, {"snapshot_id", true}, {"version", true}, {"markdown", true}, {"coverage", true}}
	coverageFields          = []field{{"covered", true}, {"uncovered", true}, {"total", true}}
	agentHandoffFields      = []field{{"type", true}, {"handoff_id", true}, {"source_agent_id", true}, {"target_agent_id", false}, {"scope", false}, {"summary", true}, {"results", true}, {"context_snapshot", true}}
	contextSnapshotFields   = []field{{"decision_ids", true}, {"warning_ids", true}, {"finding_ids", true}, {"summaries", true}}
	failureFields           = []field{{"type", true}, {"code", true}, {"message", true}, {"partial_output", true}, {"recovery_suggestions", true}, {"plan_id", false}, {"snapshot_id", false}}
)

// The JSON types problems say a value should have, as goKind names them.
const (
	wantString  = "a string"
	wantBool    = "a boolean"
	wantInteger = "an integer"
	wantNumber  = "a number"
	wantObject  = "an object"
	wantTime    = "an ISO-8601 time string"
)

var (
	wantStrings = goKind(reflect.TypeFor[[]string]())
	wantObjects = goKind(reflect.TypeFor[[]Decision]())
	wantResults = goKind(reflect.TypeFor[[]json.RawMessage]())
)

// fields reads the members of the object n that fs names, in order: for
// each one present and not null it calls read with the field's index in
// fs and the member's value, the path pointing at the member. A required
// field that is missing or null, or an optional one that is null, is a
// problem. It returns the members of other names, or nil when there are
// none.
func (d *decoder) fields(n *node, fs []field, read func(i int, v *node)) Extra {
	var vals [maxFields]*node
	inOrder := d.inOrder(n, fs, &vals)
	found := 0
	for i, f := range fs {
		v := vals[i]
		if !inOrder {
			v = d.t.member(n, f.name)
		}
		d.path = append(d.path, step{name: f.name})
		switch {
		case v == nil && f.required:
			d.problem("required, missing")
		case v == nil:
		case v.kind == 'n' && f.required:
			d.problem("required, and may not be null")
		case v.kind == 'n':
			d.problem("may not be null: leave it out instead")
		default:
			read(i, v)
		}
		if v != nil {
			found++
		}
		d.path = d.path[:len(d.path)-1]
	}
	if found == int(n.n) {
		return nil // each member is a different field
	}
	var extra Extra
	kids := d.t.kids(n)
	for i := range kids {
		k := d.t.key(&kids[i])
		if !slices.ContainsFunc(fs, func(f field) bool { return f.name == k }) {
			if extra == nil {
				extra = Extra{}
			}
			extra[strings.Clone(k)] = json.RawMessage(d.t.raw(&kids[i]))
		}
	}
	return extra
}

// maxFields is the most fields an envelope type has.
const maxFields = 10

// inOrder reports whether the members of the object n are fields of fs in
// their order, each at most once, as Baton writes them; then vals holds
// the member of each field, nil for those missing. It saves looking each
// field up among all members.
func (d *decoder) inOrder(n *node, fs []field, vals *[maxFields]*node) bool {
	kids := d.t.kids(n)
	j := 0
	for i := range kids {
		k := d.t.key(&kids[i])
		for j < len(fs) && fs[j].name != k {
			j++
		}
		if j == len(fs) {
			return false
		}
		vals[j] = &kids[i]
		j++
	}
	return true
}

// object reports whether n is an object, and a problem when it is not.
func (d *decoder) object(n *node) bool {
	if n.kind != '{' {
		d.wrong(n, wantObject)
		return false
	}
	return true
}

// list reads the array n item by item into a new slice, the path pointing
// at each item; a null item is a problem. want names the array's type.
func list[T any](d *decoder, n *node, want string, read func(d *decoder, v *node, into *T)) []T {
	if n.kind != '[' {
		d.wrong(n, want)
		return nil
	}
	kids := d.t.kids(n)
	s := make([]T, len(kids))
	for i := range kids {
		d.path = append(d.path, step{index: i})
		if v := &kids[i]; v.kind == 'n' {
			d.problem("may not be null")
		} else {
			read(d, v, &s[i])
		}
		d.path = d.path[:len(d.path)-1]
	}
	return s
}

func (d *decoder) string(n *node) string {
	if n.kind != '"' {
		d.wrong(n, wantString)
		return ""
	}
	return d.t.str(n)
}

func (d *decoder) bool(n *node) bool {
	if n.kind != 't' && n.kind != 'f' {
		d.wrong(n, wantBool)
		return false
	}
	return n.kind == 't'
}

func (d *decoder) int(n *node) int64 {
	i, err := strconv.ParseInt(d.t.raw(n), 10, 64)
	if n.kind != '0' || err != nil {
		d.wrong(n, wantInteger)
		return 0
	}
	return i
}

func (d *decoder) float(n *node) float64 {
	f, err := strconv.ParseFloat(d.t.raw(n), 64)
	if n.kind != '0' || err != nil {
		d.wrong(n, wantNumber)
		return 0
	}
	return f
}

func (d *decoder) time(n *node) time.Time {
	var t time.Time
	if n.kind != '"' || t.UnmarshalJSON([]byte(d.t.raw(n))) != nil {
		d.wrong(n, wantTime)
		return time.Time{}
	}
	return t
}

func (d *decoder) stringInto(n *node, s *string) { *s = d.string(n) }

func (d *decoder) pathInto(n *node, p *Path) { *p = Path(d.string(n)) }

func (d *decoder) rawInto(n *node, r *json.RawMessage) { *r = json.RawMessage(d.t.raw(n)) }

func (d *decoder) strings(n *node) []string { return list(d, n, wantStrings, (*decoder).stringInto) }

func (d *decoder) envelope(n *node, e *Envelope) {
	e.Extra = d.fields(n, envelopeFields, func(i int, v *node) {
		switch i {
		case 0:
			e.HandoffVersion = d.string(v)
		case 1:
			e.Timestamp = d.time(v)
		case 2:
			e.SessionID = d.string(v)
		case 3:
			e.ProductName = d.string(v)
		case 4:
			e.ProductNameSlug = d.string(v)
		case 5:
			if d.object(v) {
				d.sourceAgent(v, &e.SourceAgent)
			}
		case 6:
			if d.object(v) {
				d.targetAgent(v, &e.TargetAgent)
			}
		case 7:
			if d.object(v) {
				d.artifacts(v, &e.Artifacts)
			}
		case 8:
			d.payload(v, &e.Payload)
		case 9:
			if d.object(v) {
				d.workflowState(v, &e.WorkflowState)
			}
		}
	})
}

func (d *decoder) sourceAgent(n *node, a *SourceAgent) {
	a.Extra = d.fields(n, sourceAgentFields, func(i int, v *node) {
		switch i {
		case 0:
			a.AgentType = AgentType(d.string(v))
		case 1:
			a.PhaseCompleted = d.string(v)
		case 2:
			a.ExecutionTimeMS = d.int(v)
		}
	})
}

func (d *decoder) targetAgent(n *node, a *TargetAgent) {
	a.Extra = d.fields(n, targetAgentFields, func(i int, v *node) {
		switch i {
		case 0:
			a.AgentType = AgentType(d.string(v))
		case 1:
			a.PhaseToExecute = d.string(v)
		}
	})
}

func (d *decoder) artifacts(n *node, a *Artifacts) {
	a.Extra = d.fields(n, artifactsFields, func(i int, v *node) {
		switch i {
		case 0:
			a.Created = list(d, v, wantObjects, (*decoder).artifact)
		case 1:
			a.Referenced = list(d, v, wantStrings, (*decoder).pathInto)
		}
	})
}

func (d *decoder) artifact(n *node, a *Artifact) {
	if !d.object(n) {
		return
	}
	a.Extra = d.fields(n, artifactFields, func(i int, v *node) {
		switch i {
		case 0:
			a.Type = ArtifactType(d.string(v))
		case 1:
			a.Path = Path(d.string(v))
		case 2:
			a.Description = d.string(v)
		}
	})
}

func (d *decoder) workflowState(n *node, w *WorkflowState) {
	w.Extra = d.fields(n, workflowStateFields, func(i int, v *node) {
		switch i {
		case 0:
			w.IsAIMLProduct = d.bool(v)
		case 1:
			w.ExecutionMode = ExecutionMode(d.string(v))
		case 2:
			w.PhasesCompleted = d.strings(v)
		case 3:
			w.PhasesRemaining = d.strings(v)
		case 4:
			w.ProgressPercentage = d.float(v)
		}
	})
}

// payload reads a payload: one of Baton's kinds by its "type", or any
// other object as given.
func (d *decoder) payload(n *node, p *Payload) {
	if !d.object(n) {
		return
	}
	var kind Kind
	if t := d.t.member(n, "type"); t != nil && t.kind == '"' {
		kind = Kind(d.t.str(t))
	}
	switch kind {
	case KindBrainstormHandoff:
		p.BrainstormHandoff = new(BrainstormHandoff)
		d.brainstormHandoff(n, p.BrainstormHandoff)
	case KindPlan:
		p.Plan = new(Plan)
		d.plan(n, p.Plan)
	case KindAgentHandoff:
		p.AgentHandoff = new(AgentHandoff)
		d.agentHandoff(n, p.AgentHandoff)
	case KindError:
		p.Error = new(Failure)
		d.failure(n, p.Error)
	default:
		p.Raw = json.RawMessage(d.t.raw(n))
	}
}

func (d *decoder) brainstormHandoff(n *node, b *BrainstormHandoff) {
	b.Extra = d.fields(n, brainstormHandoffFields, func(i int, v *node) {
		switch i {
		case 0:
			b.Type = Kind(d.string(v))
		case 1:
			b.SnapshotID = d.string(v)
		case 2:
			b.SHA256 = d.string(v)
		case 3:
			b.HandoffID = d.string(v)
		case 4:
			b.ThreadID = d.string(v)
		case 5:
			b.FrozenAt = d.time(v)
		case 6:
			b.Summary = d.string(v)
		case 7:
			b.Decisions = list(d, v, wantObjects, (*decoder).decision)
		case 8:
			b.FilesReferenced = list(d, v, wantObjects, (*decoder).file)
		case 9:
			b.Risks = list(d, v, wantObjects, (*decoder).risk)
		}
	})
}

func (d *decoder) decision(n *node, dec *Decision) {
	if !d.object(n) {
		return
	}
	dec.Extra = d.fields(n, decisionFields, func(i int, v *node) {
		switch i {
		case 0:
			dec.ID = d.string(v)
		case 1:
			dec.Label = d.string(v)
		case 2:
			dec.Content = d.string(v)
		case 3:
			dec.Source = d.string(v)
		case 4:
			c := new(float64)
			*c = d.float(v)
			dec.Confidence = c
		case 5:
			dec.MessageIDs = d.strings(v)
		}
	})
}

func (d *decoder) file(n *node, f *File) {
	if !d.object(n) {
		return
	}
	f.Extra = d.fields(n, fileFields, func(i int, v *node) {
		switch i {
		case 0:
			f.ID = d.string(v)
		case 1:
			f.Path = Path(d.string(v))
		case 2:
			f.Relevance = d.string(v)
		case 3:
			f.Context = d.string(v)
		}
	})
}

func (d *decoder) risk(n *node, r *Risk) {
	if !d.object(n) {
		return
	}
	r.Extra = d.fields(n, riskFields, func(i int, v *node) {
		switch i {
		case 0:
			r.ID = d.string(v)
		case 1:
			r.Description = d.string(v)
		case 2:
			r.Severity = d.string(v)
		case 3:
			r.Mitigation = d.string(v)
		}
	})
}

func (d *decoder) plan(n *node, p *Plan) {
	p.Extra = d.fields(n, planFields, func(i int, v *node) {
		switch i {
		case 0:
			p.Type = Kind(d.string(v))
		case 1:
			p.PlanID = d.string(v)
		case 2:
			p.SnapshotID = d.string(v)
		case 3:
			p.Version = int(d.int(v))
		case 4:
			p.Markdown = d.string(v)
		case 5:
			if d.object(v) {
				d.coverage(v, &p.Coverage)
			}
		}
	})
}

func (d *decoder) coverage(n *node, c *Coverage) {
	c.Extra = d.fields(n, coverageFields, func(i int, v *node) {
		switch i {
		case 0:
			c.Covered = d.strings(v)
		case 1:
			c.Uncovered = d.strings(v)
		case 2:
			c.Total = int(d.int(v))
		}
	})
}

func (d *decoder) agentHandoff(n *node, a *AgentHandoff) {
	a.Extra = d.fields(n, agentHandoffFields, func(i int, v *node) {
		switch i {
		case 0:
			a.Type = Kind(d.string(v))
		case 1:
			a.HandoffID = d.string(v)
		case 2:
			a.SourceAgentID = d.string(v)
		case 3:
			a.TargetAgentID = d.string(v)
		case 4:
			a.Scope = d.string(v)
		case 5:
			a.Summary = d.string(v)
		case 6:
			a.Results = list(d, v, wantResults, (*decoder).rawInto)
		case 7:
			if d.object(v) {
				d.contextSnapshot(v, &a.ContextSnapshot)
			}
		}
	})
}

func (d *decoder) contextSnapshot(n *node, c *ContextSnapshot) {
	c.Extra = d.fields(n, contextSnapshotFields, func(i int, v *node) {
		switch i {
		case 0:
			c.DecisionIDs = d.strings(v)
		case 1:
			c.WarningIDs = d.strings(v)
		case 2:
			c.FindingIDs = d.strings(v)
		case 3:
			c.Summaries = d.strings(v)
		}
	})
}

func (d *decoder) failure(n *node, f *Failure) {
	f.Extra = d.fields(n, failureFields, func(i int, v *node) {
		switch i {
		case 0:
			f.Type = Kind(d.string(v))
		case 1:
			f.Code = ErrorCode(d.string(v))
		case 2:
			f.Message = d.string(v)
		case 3:
			f.PartialOutput = d.string(v)
		case 4:
			f.RecoverySuggestions = d.strings(v)
		case 5:
			f.PlanID = d.string(v)
		case 6:
			f.SnapshotID = d.string(v)
		}
	})
}

// nodeKind names the JSON type of a value: "a string", "an object", …
func nodeKind(n *node) string {
	switch n.kind {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// goKind names the JSON type a Go type reads.
func goKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.Slice:
		return "an array of " + strings.TrimPrefix(strings.TrimPrefix(goKind(t.Elem()), "a "), "an ") + "s"
	case reflect.Pointer:
		return goKind(t.Elem())
	case reflect.Struct:
		if t.String() == "time.Time" {
			return "an ISO-8601 time string"
		}
		return "an object"
	}
	return t.String()
}

func size(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

// Encode writes an envelope as indented JSON, the form Baton exports.
func Encode(e *Envelope) ([]byte, error) {
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode envelope: %w", err)
	}
	return append(b, '\n'), nil
}

// MarshalJSON writes the payload of its kind, or Raw as given.
func (p Payload) MarshalJSON() ([]byte, error) {
	switch {
	case p.BrainstormHandoff != nil:
		return json.Marshal(p.BrainstormHandoff)
	case p.Plan != nil:
		return json.Marshal(p.Plan)
	case p.AgentHandoff != nil:
		return json.Marshal(p.AgentHandoff)
	case p.Error != nil:
		return json.Marshal(p.Error)
	case len(p.Raw) > 0:
		return p.Raw, nil
	}
	return []byte("null"), nil
}

// withExtra writes v (a struct without MarshalJSON) with the fields of
// extra appended, in key order, so that an envelope read and written again
// keeps the fields it did not know.
func withExtra(v any, extra Extra) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil || len(extra) == 0 {
		return b, err
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = b[:len(b)-1] // the closing brace
	for _, k := range keys {
		if len(b) > 1 {
			b = append(b, ',')
		}
		kb, _ := json.Marshal(k)
		b = append(append(append(b, kb...), ':'), extra[k]...)
	}
	return append(b, '}'), nil
}

// MarshalJSON writes the envelope with the fields it did not know.
func (e Envelope) MarshalJSON() ([]byte, error) {
	type plain Envelope
	return withExtra(plain(e), e.Extra)
}

// MarshalJSON writes the agent with the fields it did not know.
func (a SourceAgent) MarshalJSON() ([]byte, error) {
	type plain SourceAgent
	return withExtra(plain(a), a.Extra)
}

// MarshalJSON writes the agent with the fields it did not know.
func (a TargetAgent) MarshalJSON() ([]byte, error) {
	type plain TargetAgent
	return withExtra(plain(a), a.Extra)
}

// MarshalJSON writes the artifacts with the fields it did not know.
func (a Artifacts) MarshalJSON() ([]byte, error) {
	type plain Artifacts
	return withExtra(plain(a), a.Extra)
}

// MarshalJSON writes the artifact with the fields it did not know.
func (a Artifact) MarshalJSON() ([]byte, error) {
	type plain Artifact
	return withExtra(plain(a), a.Extra)
}

// MarshalJSON writes the state with the fields it did not know.
func (w WorkflowState) MarshalJSON() ([]byte, error) {
	type plain WorkflowState
	return withExtra(plain(w), w.Extra)
}

// MarshalJSON writes the payload with the fields it did not know.
func (b BrainstormHandoff) MarshalJSON() ([]byte, error) {
	type plain BrainstormHandoff
	return withExtra(plain(b), b.Extra)
}

// MarshalJSON writes the decision with the fields it did not know.
func (d Decision) MarshalJSON() ([]byte, error) {
	type plain Decision
	return withExtra(plain(d), d.Extra)
}

// MarshalJSON writes the file with the fields it did not know.
func (f File) MarshalJSON() ([]byte, error) {
	type plain File
	return withExtra(plain(f), f.Extra)
}

// MarshalJSON writes the risk with the fields it did not know.
func (r Risk) MarshalJSON() ([]byte, error) {
	type plain Risk
	return withExtra(plain(r), r.Extra)
}

// MarshalJSON writes the plan with the fields it did not know.
func (p Plan) MarshalJSON() ([]byte, error) {
	type plain Plan
	return withExtra(plain(p), p.Extra)
}

// MarshalJSON writes the coverage with the fields it did not know.
func (c Coverage) MarshalJSON() ([]byte, error) {
	type plain Coverage
	return withExtra(plain(c), c.Extra)
}

// MarshalJSON writes the agent handoff with the fields it did not know.
func (a AgentHandoff) MarshalJSON() ([]byte, error) {
	type plain AgentHandoff
	return withExtra(plain(a), a.Extra)
}

// MarshalJSON writes the context with the fields it did not know.
func (c ContextSnapshot) MarshalJSON() ([]byte, error) {
	type plain ContextSnapshot
	return withExtra(plain(c), c.Extra)
}

// MarshalJSON writes the failure with the fields it did not know.
func (f Failure) MarshalJSON() ([]byte, error) {
	type plain Failure
	return withExtra(plain(f), f.Extra)
}
