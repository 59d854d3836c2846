package envelope

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/invopop/jsonschema"
)

//go:generate go run ./internal/schemagen

// SchemaID is the schema's stable $id, where Baton serves it.
const SchemaID = "https://baton.dev/schemas/handoff-envelope-1.0.json"

// SchemaFile is the committed schema's file name, in this package's folder
// and under /schemas/ on a Baton server.
const SchemaFile = "handoff-envelope-1.0.json"

// Schema is the committed JSON Schema (draft 2020-12) of envelope 1.0, as
// GenerateSchema wrote it (go generate ./store/envelope).
//
//go:embed handoff-envelope-1.0.json
var Schema []byte

// pathPattern is Path's rule as a regular expression that both Go's RE2
// and JavaScript accept: segments of characters other than / \ : * ? | %
// and white space, none of them "." or "..", the first not starting with
// ~, $ or -. store.CleanPath, which Validate applies, is stricter still
// (control and look-alike characters).
const pathPattern = `^(?:[^/\\:*?|%\s.~$-][^/\\:*?|%\s]*|\.[^/\\:*?|%\s.][^/\\:*?|%\s]*|\.\.[^/\\:*?|%\s]+)` +
	`(?:/(?:[^/\\:*?|%\s.][^/\\:*?|%\s]*|\.[^/\\:*?|%\s.][^/\\:*?|%\s]*|\.\.[^/\\:*?|%\s]+))*$`

// JSONSchema describes a Path.
func (Path) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", MinLength: ptr(1), MaxLength: ptr(MaxPathLen), Pattern: pathPattern,
		Description: "A relative path inside the project or bundle: no leading /, ~ or drive letter, no . or .. segments, no backslashes, colons, % or white space."}
}

// JSONSchema lists the agent types.
func (AgentType) JSONSchema() *jsonschema.Schema {
	return enum("The role of an agent: Baton's (brainstorm, planner, coder, reviewer, orchestrator) or a product team's.", AgentTypes)
}

// JSONSchema lists the artifact types.
func (ArtifactType) JSONSchema() *jsonschema.Schema {
	return enum("The format of an artifact file.", []ArtifactType{ArtifactMarkdown, ArtifactHTML, ArtifactJSON})
}

// JSONSchema lists the execution modes.
func (ExecutionMode) JSONSchema() *jsonschema.Schema {
	return enum("Whether people approve each phase.", []ExecutionMode{FullApproval, Streamlined})
}

// JSONSchema lists the error codes.
func (ErrorCode) JSONSchema() *jsonschema.Schema {
	return enum("Why the run ended.", []ErrorCode{ResearchFailed, GenerationFailed, ValidationFailed, UserCancelled})
}

func enum[T ~string](desc string, values []T) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "string", Description: desc}
	for _, v := range values {
		s.Enum = append(s.Enum, string(v))
	}
	return s
}

func ptr(n int) *uint64 { u := uint64(n); return &u }

// payloadDefs are the definitions of Baton's payload kinds, by kind.
var payloadDefs = []struct {
	kind Kind
	typ  reflect.Type
}{
	{KindBrainstormHandoff, reflect.TypeFor[BrainstormHandoff]()},
	{KindPlan, reflect.TypeFor[Plan]()},
	{KindAgentHandoff, reflect.TypeFor[AgentHandoff]()},
	{KindError, reflect.TypeFor[Failure]()},
}

// JSONSchema says a payload is one of Baton's kinds, by its type, or any
// other object, passed through as given.
func (Payload) JSONSchema() *jsonschema.Schema {
	s := &jsonschema.Schema{Description: "What is handed off: one of Baton's payloads (brainstorm_handoff, plan, agent_handoff, error), chosen by its type, or another agent's object kept as given."}
	kinds := make([]any, len(payloadDefs))
	for i, d := range payloadDefs {
		kinds[i] = string(d.kind)
		s.OneOf = append(s.OneOf, &jsonschema.Schema{Ref: "#/$defs/" + d.typ.Name()})
	}
	s.OneOf = append(s.OneOf, &jsonschema.Schema{
		Type:        "object",
		Description: "Another agent's payload, kept as given.",
		Not:         withProp(&jsonschema.Schema{Required: []string{"type"}}, "type", &jsonschema.Schema{Enum: kinds}),
	})
	return s
}

// JSONSchemaExtend adds the rule that Baton's own roles (brainstorm,
// planner, coder, reviewer) send only Baton's payloads.
func (Envelope) JSONSchemaExtend(s *jsonschema.Schema) {
	var roles, kinds []any
	for _, t := range AgentTypes {
		if t.batonOnly() {
			roles = append(roles, string(t))
		}
	}
	for _, k := range Kinds {
		kinds = append(kinds, string(k))
	}
	s.If = withProp(&jsonschema.Schema{Required: []string{"source_agent"}}, "source_agent",
		withProp(&jsonschema.Schema{}, "agent_type", &jsonschema.Schema{Enum: roles}))
	s.Then = withProp(&jsonschema.Schema{}, "payload",
		withProp(&jsonschema.Schema{Required: []string{"type"}}, "type", &jsonschema.Schema{Enum: kinds}))
}

// JSONSchemaExtend gives the IDs and summaries their item rules.
func (ContextSnapshot) JSONSchemaExtend(s *jsonschema.Schema) {
	for _, name := range []string{"decision_ids", "warning_ids", "finding_ids"} {
		if p, ok := s.Properties.Get(name); ok {
			p.Items = &jsonschema.Schema{Type: "string", MinLength: ptr(1), MaxLength: ptr(100)}
		}
	}
	if p, ok := s.Properties.Get("summaries"); ok {
		p.Items = &jsonschema.Schema{Type: "string", MaxLength: ptr(MaxSummaryLen), Pattern: "^(Decision|Warning|Finding): "}
	}
}

// JSONSchemaExtend gives the labels their item rules.
func (Coverage) JSONSchemaExtend(s *jsonschema.Schema) {
	for _, name := range []string{"covered", "uncovered"} {
		if p, ok := s.Properties.Get(name); ok {
			p.Items = &jsonschema.Schema{Type: "string", Pattern: "^D[1-9][0-9]*$"}
		}
	}
}

// JSONSchemaExtend gives the phases their item rules.
func (WorkflowState) JSONSchemaExtend(s *jsonschema.Schema) {
	for _, name := range []string{"phases_completed", "phases_remaining"} {
		if p, ok := s.Properties.Get(name); ok {
			p.Items = &jsonschema.Schema{Type: "string", MinLength: ptr(1), MaxLength: ptr(MaxSummaryLen)}
		}
	}
}

// JSONSchemaExtend gives the suggestions their item rules.
func (Failure) JSONSchemaExtend(s *jsonschema.Schema) {
	if p, ok := s.Properties.Get("recovery_suggestions"); ok {
		p.Items = &jsonschema.Schema{Type: "string", MinLength: ptr(1), MaxLength: ptr(MaxSummaryLen)}
	}
}

// withProp returns s with the single property name.
func withProp(s *jsonschema.Schema, name string, p *jsonschema.Schema) *jsonschema.Schema {
	s.Properties = jsonschema.NewProperties()
	s.Properties.Set(name, p)
	return s
}

// GenerateSchema generates the JSON Schema of envelope 1.0 from the Go
// types: required fields are those without omitempty, as Decode reads
// them, and objects allow fields of later minor versions. Descriptions
// come from the doc comments of the package's source in dir (empty: none).
// go generate writes it to SchemaFile; a test checks the committed copy.
func GenerateSchema(dir string) ([]byte, error) {
	r := &jsonschema.Reflector{AllowAdditionalProperties: true, BaseSchemaID: "https://baton.dev/schemas"}
	if dir != "" {
		if err := r.AddGoComments("github.com/baton-dev/baton/store/envelope", dir); err != nil {
			return nil, fmt.Errorf("read doc comments: %w", err)
		}
	}
	s := r.Reflect(&Envelope{})
	s.ID = SchemaID
	s.Title = "Baton handoff envelope 1.0"
	for _, d := range payloadDefs {
		ks := r.ReflectFromType(d.typ)
		for name, def := range ks.Definitions {
			s.Definitions[name] = def
		}
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode schema: %w", err)
	}
	return append(b, '\n'), nil
}
