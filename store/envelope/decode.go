package envelope

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
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
func Decode(data []byte) (*Envelope, Problems) {
	var ps Problems
	if len(data) > MaxBytes {
		ps.add("", "the envelope is %s; the limit is %s", size(len(data)), size(MaxBytes))
		return nil, ps
	}
	root, serr := parse(data)
	if serr != nil {
		line, col := position(data, serr.offset)
		ps.add("", "not valid JSON at line %d, column %d: %s", line, col, serr.msg)
		return nil, ps
	}
	if root.kind != '{' {
		ps.add("", "is %s, want an object", nodeKind(root))
		return nil, ps
	}
	if p := checkVersion(root.member("handoff_version")); p != nil {
		return nil, Problems{*p}
	}
	e := new(Envelope)
	decodeFields(root, reflect.ValueOf(e).Elem(), "", &ps)
	if len(ps) > 0 {
		return nil, ps
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
func checkVersion(n *node) *Problem {
	if n == nil || n.kind != '"' {
		return &Problem{Path: "handoff_version", Message: `required: a string such as "1.0"`}
	}
	v := n.str()
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

// field is a struct field of an envelope type as the decoder sees it.
type field struct {
	name     string // JSON name
	index    int
	required bool // no omitempty: must be present and not null
}

var fieldCache sync.Map // reflect.Type -> []field

// fieldsOf lists the JSON fields of a struct type. A field is required
// unless it is omitempty, the same rule the schema generator follows.
func fieldsOf(t reflect.Type) []field {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.([]field)
	}
	var fs []field
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" || !sf.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		fs = append(fs, field{name: name, index: i, required: !strings.Contains(opts, "omitempty")})
	}
	fieldCache.Store(t, fs)
	return fs
}

var (
	extraType   = reflect.TypeFor[Extra]()
	rawType     = reflect.TypeFor[json.RawMessage]()
	payloadType = reflect.TypeFor[Payload]()
	timeType    = reflect.TypeFor[time.Time]()
)

// decodeFields fills the struct v from the members of the object n: known
// fields by their JSON names, the rest into its Extra field.
func decodeFields(n *node, v reflect.Value, path string, ps *Problems) {
	fs := fieldsOf(v.Type())
	for _, f := range fs {
		val := n.member(f.name)
		p := join(path, f.name)
		switch {
		case val == nil && f.required:
			ps.add(p, "required, missing")
			continue
		case val == nil:
			continue
		case val.kind == 'n' && f.required:
			ps.add(p, "required, and may not be null")
			continue
		case val.kind == 'n':
			ps.add(p, "may not be null: leave it out instead")
			continue
		}
		decodeValue(val, v.Field(f.index), p, ps)
	}
	var extra Extra
	for i, k := range n.keys {
		if !slices.ContainsFunc(fs, func(f field) bool { return f.name == k }) {
			if extra == nil {
				extra = Extra{}
			}
			extra[k] = bytes.Clone(n.vals[i].raw)
		}
	}
	if extra != nil {
		if ev := v.FieldByName("Extra"); ev.IsValid() && ev.Type() == extraType {
			ev.Set(reflect.ValueOf(extra))
		}
	}
}

// decodeValue reads n into v: structs field by field, slices item by item
// (so that a problem names its index), the payload by its kind, scalars
// by their JSON type.
func decodeValue(n *node, v reflect.Value, path string, ps *Problems) {
	t := v.Type()
	wrong := func() { ps.add(path, "is %s, want %s", nodeKind(n), goKind(t)) }
	switch {
	case t == payloadType:
		decodePayload(n, v.Addr().Interface().(*Payload), path, ps)
	case t == rawType:
		v.SetBytes(bytes.Clone(n.raw))
	case t == timeType:
		if n.kind != '"' || v.Addr().Interface().(*time.Time).UnmarshalJSON(n.raw) != nil {
			wrong()
		}
	case t.Kind() == reflect.Pointer:
		v.Set(reflect.New(t.Elem()))
		decodeValue(n, v.Elem(), path, ps)
	case t.Kind() == reflect.Struct:
		if n.kind != '{' {
			wrong()
			return
		}
		decodeFields(n, v, path, ps)
	case t.Kind() == reflect.Slice:
		if n.kind != '[' {
			wrong()
			return
		}
		s := reflect.MakeSlice(t, len(n.vals), len(n.vals))
		for i, item := range n.vals {
			p := path + "[" + strconv.Itoa(i) + "]"
			if item.kind == 'n' {
				ps.add(p, "may not be null")
				continue
			}
			decodeValue(item, s.Index(i), p, ps)
		}
		v.Set(s)
	case t.Kind() == reflect.String:
		if n.kind != '"' {
			wrong()
			return
		}
		v.SetString(n.str())
	case t.Kind() == reflect.Bool:
		if n.kind != 't' && n.kind != 'f' {
			wrong()
			return
		}
		v.SetBool(n.kind == 't')
	case t.Kind() == reflect.Int || t.Kind() == reflect.Int64:
		i, err := strconv.ParseInt(string(n.raw), 10, 64)
		if n.kind != '0' || err != nil {
			wrong()
			return
		}
		v.SetInt(i)
	case t.Kind() == reflect.Float64:
		f, err := strconv.ParseFloat(string(n.raw), 64)
		if n.kind != '0' || err != nil {
			wrong()
			return
		}
		v.SetFloat(f)
	default:
		if err := json.Unmarshal(n.raw, v.Addr().Interface()); err != nil {
			wrong()
		}
	}
}

// decodePayload reads a payload: one of Baton's kinds by its "type", or
// any other object as given.
func decodePayload(n *node, p *Payload, path string, ps *Problems) {
	if n.kind != '{' {
		ps.add(path, "is %s, want an object", nodeKind(n))
		return
	}
	var kind Kind
	if t := n.member("type"); t != nil && t.kind == '"' {
		kind = Kind(t.str())
	}
	var v any
	switch kind {
	case KindBrainstormHandoff:
		p.BrainstormHandoff = new(BrainstormHandoff)
		v = p.BrainstormHandoff
	case KindPlan:
		p.Plan = new(Plan)
		v = p.Plan
	case KindAgentHandoff:
		p.AgentHandoff = new(AgentHandoff)
		v = p.AgentHandoff
	case KindError:
		p.Error = new(Failure)
		v = p.Error
	default:
		p.Raw = bytes.Clone(n.raw)
		return
	}
	decodeFields(n, reflect.ValueOf(v).Elem(), path, ps)
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

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
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
