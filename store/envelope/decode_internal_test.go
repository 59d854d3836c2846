package envelope

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestFieldTables checks the decoder's field tables against the types'
// json tags: every JSON field in struct order, required unless omitempty
// (the rule the schema generator follows).
func TestFieldTables(t *testing.T) {
	for typ, fs := range map[reflect.Type][]field{
		reflect.TypeFor[Envelope]():          envelopeFields,
		reflect.TypeFor[SourceAgent]():       sourceAgentFields,
		reflect.TypeFor[TargetAgent]():       targetAgentFields,
		reflect.TypeFor[Artifacts]():         artifactsFields,
		reflect.TypeFor[Artifact]():          artifactFields,
		reflect.TypeFor[WorkflowState]():     workflowStateFields,
		reflect.TypeFor[BrainstormHandoff](): brainstormHandoffFields,
		reflect.TypeFor[Decision]():          decisionFields,
		reflect.TypeFor[File]():              fileFields,
		reflect.TypeFor[Risk]():              riskFields,
		reflect.TypeFor[Plan]():              planFields,
		reflect.TypeFor[Coverage]():          coverageFields,
		reflect.TypeFor[AgentHandoff]():      agentHandoffFields,
		reflect.TypeFor[ContextSnapshot]():   contextSnapshotFields,
		reflect.TypeFor[Failure]():           failureFields,
	} {
		var want []field
		for i := range typ.NumField() {
			sf := typ.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" || !sf.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			want = append(want, field{name: name, required: !strings.Contains(opts, "omitempty")})
		}
		if len(fs) > maxFields {
			t.Errorf("%s has %d fields; maxFields is %d", typ, len(fs), maxFields)
		}
		if !slices.Equal(fs, want) {
			t.Errorf("%s: the decoder reads %v; its json tags say %v", typ, fs, want)
		}
	}
}

// TestPath: problems name the path the decoder is at as Problem.Path
// writes it.
func TestPath(t *testing.T) {
	d := &decoder{path: []step{{name: "payload"}, {name: "decisions"}, {index: 12}, {name: "message_ids"}, {index: 0}}}
	if got, want := d.at(), "payload.decisions[12].message_ids[0]"; got != want {
		t.Errorf("at() = %q, want %q", got, want)
	}
	if got := (&decoder{}).at(); got != "" {
		t.Errorf("at() at the root = %q, want \"\"", got)
	}
}
