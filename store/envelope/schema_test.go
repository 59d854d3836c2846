package envelope_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/baton-dev/baton/store/envelope"
)

// TestSchemaUpToDate fails when the committed schema is not what the Go
// types generate: run go generate ./store/envelope (make generate).
func TestSchemaUpToDate(t *testing.T) {
	got, err := envelope.GenerateSchema(".")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, envelope.Schema) {
		t.Fatalf("%s is stale: run go generate ./store/envelope (make generate) and commit it", envelope.SchemaFile)
	}
}

// TestSchemaMatchesTypes checks the schema against the Go types the
// decoder reads: every JSON field of every object type is a property of
// its definition, required exactly when the decoder requires it (no
// omitempty), and the $id is the stable one.
func TestSchemaMatchesTypes(t *testing.T) {
	var s struct {
		ID   string `json:"$id"`
		Ver  string `json:"$schema"`
		Defs map[string]struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(envelope.Schema, &s); err != nil {
		t.Fatal(err)
	}
	if s.ID != envelope.SchemaID || s.Ver != "https://json-schema.org/draft/2020-12/schema" {
		t.Fatalf("$id=%q $schema=%q, want %q and draft 2020-12", s.ID, s.Ver, envelope.SchemaID)
	}
	for _, v := range []any{envelope.Envelope{}, envelope.SourceAgent{}, envelope.TargetAgent{}, envelope.Artifacts{},
		envelope.Artifact{}, envelope.WorkflowState{}, envelope.BrainstormHandoff{}, envelope.Decision{}, envelope.File{},
		envelope.Risk{}, envelope.Plan{}, envelope.Coverage{}, envelope.AgentHandoff{}, envelope.ContextSnapshot{}, envelope.Failure{}} {
		typ := reflect.TypeOf(v)
		def, ok := s.Defs[typ.Name()]
		if !ok {
			t.Errorf("no $defs/%s", typ.Name())
			continue
		}
		var props, required []string
		for i := range typ.NumField() {
			tag := typ.Field(i).Tag.Get("json")
			if tag == "-" || tag == "" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			props = append(props, name)
			if !strings.Contains(opts, "omitempty") {
				required = append(required, name)
			}
		}
		var got []string
		for p := range def.Properties {
			got = append(got, p)
		}
		slices.Sort(props)
		slices.Sort(got)
		if !slices.Equal(got, props) {
			t.Errorf("$defs/%s properties = %v, want %v", typ.Name(), got, props)
		}
		if !slices.Equal(def.Required, required) {
			t.Errorf("$defs/%s required = %v, want %v", typ.Name(), def.Required, required)
		}
	}
}

// ajvValidate finds ../shared/tools/ajv-validate above the module (or
// $AJV_VALIDATE). Without it, or without npm, the Ajv test skips locally
// and fails in CI (CI=true).
func ajvValidate(t *testing.T) string {
	missing := func(why string) string {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s: CI needs the independent validator", why)
		}
		t.Skip(why)
		return ""
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return missing("npm is not installed")
	}
	if p := os.Getenv("AJV_VALIDATE"); p != "" {
		return p
	}
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for ; dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		p := filepath.Join(dir, "shared", "tools", "ajv-validate")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return missing("shared/tools/ajv-validate not found above the module; set AJV_VALIDATE")
}

// TestCorpusAjv runs the independent validator, Ajv, over the corpus: it
// accepts the valid files and those only Go's rules refuse, and refuses
// every file under invalid/schema, as santhosh-tekuri/jsonschema does in
// TestCorpus.
func TestCorpusAjv(t *testing.T) {
	if testing.Short() {
		t.Skip("Ajv starts Node for each file")
	}
	tool := ajvValidate(t)
	files := readCorpus(t)
	// Two runs at once: the tool starts Node for each file.
	outs := make([][]byte, 2)
	var wg sync.WaitGroup
	for i := range outs {
		args := []string{envelope.SchemaFile}
		for j := i; j < len(files); j += len(outs) {
			args = append(args, files[j].path)
		}
		wg.Go(func() { outs[i], _ = exec.Command(tool, args...).CombinedOutput() })
	}
	wg.Wait()
	out := bytes.Join(outs, nil)
	verdicts := map[string]bool{}
	for line := range strings.SplitSeq(string(out), "\n") {
		if name, ok := strings.CutSuffix(line, " valid"); ok {
			verdicts[name] = true
		}
	}
	if len(verdicts) == 0 {
		t.Fatalf("ajv-validate said nothing valid; its output:\n%s", out)
	}
	for _, f := range files {
		abs, _ := filepath.Abs(f.path)
		if got := verdicts[abs]; got != f.schema {
			t.Errorf("Ajv: %s valid=%v, want %v", f.path, got, f.schema)
		}
	}
	if t.Failed() {
		t.Logf("ajv-validate output:\n%s", out)
	}
}
