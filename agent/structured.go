package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ErrSchema is wrapped by every error StructuredOutput returns: the reply was
// not JSON or did not match the schema it was asked for.
var ErrSchema = errors.New("model reply does not match the requested schema")

// StructuredOutput parses text, the reply to a Request whose Schema was s,
// validates it against s and decodes it into a T. On any mismatch it returns
// an error wrapping ErrSchema and the zero T: nothing partial. A reply
// wrapped in a single markdown code fence is accepted, since some models add
// one even when asked for bare JSON.
func StructuredOutput[T any](s *Schema, text string) (T, error) {
	var zero T
	if s == nil || len(s.JSON) == 0 {
		return zero, fmt.Errorf("structured output: no schema given")
	}
	sch, err := compileSchema(s)
	if err != nil {
		return zero, err
	}
	body := unfence(text)
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(body))
	if err != nil {
		return zero, fmt.Errorf("%w: %s: reply is not JSON: %v", ErrSchema, s.Name, err)
	}
	if err := sch.Validate(doc); err != nil {
		return zero, fmt.Errorf("%w: %s: %v", ErrSchema, s.Name, err)
	}
	var v T
	dec := json.NewDecoder(strings.NewReader(body))
	if err := dec.Decode(&v); err != nil {
		return zero, fmt.Errorf("%w: %s: %v", ErrSchema, s.Name, err)
	}
	return v, nil
}

// compiledSchemas holds every schema compiled so far, keyed by name and
// JSON: the extraction's, the judge's and the tools' schemas are compiled
// once per process, not once per reply or tool call. Schemas come from
// code, so the map stays small.
var compiledSchemas sync.Map // string -> *jsonschema.Schema

// compileSchema returns the compiled JSON Schema held by s, compiling it
// on first use.
func compileSchema(s *Schema) (*jsonschema.Schema, error) {
	key := s.Name + "\x00" + string(s.JSON)
	if sch, ok := compiledSchemas.Load(key); ok {
		return sch.(*jsonschema.Schema), nil
	}
	sch, err := compileSchemaJSON(s)
	if err != nil {
		return nil, err
	}
	got, _ := compiledSchemas.LoadOrStore(key, sch)
	return got.(*jsonschema.Schema), nil
}

// compileSchemaJSON compiles the JSON Schema held by s.
func compileSchemaJSON(s *Schema) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(s.JSON))
	if err != nil {
		return nil, fmt.Errorf("structured output: schema %s is not JSON: %w", s.Name, err)
	}
	c := jsonschema.NewCompiler()
	url := "mem://schema/" + s.Name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("structured output: schema %s: %w", s.Name, err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("structured output: schema %s: %w", s.Name, err)
	}
	return sch, nil
}

// unfence removes one surrounding ``` fence (with an optional language tag).
func unfence(text string) string {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "```") || !strings.HasSuffix(t, "```") || len(t) < 6 {
		return t
	}
	t = strings.TrimSuffix(t[3:], "```")
	if i := strings.IndexByte(t, '\n'); i >= 0 && !strings.ContainsAny(t[:i], "{[") {
		t = t[i+1:]
	}
	return strings.TrimSpace(t)
}
