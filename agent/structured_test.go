package agent

import (
	"errors"
	"testing"
)

// A schema is compiled once per process, not on every reply: the compiled
// form is reused, and a different schema of the same name is not mixed up
// with it.
func TestCompileSchemaOnce(t *testing.T) {
	first, err := compileSchema(ExtractionSchema())
	if err != nil {
		t.Fatal(err)
	}
	again, err := compileSchema(ExtractionSchema())
	if err != nil {
		t.Fatal(err)
	}
	if first != again {
		t.Fatal("the extraction schema was compiled twice, want the first compilation reused")
	}
	other, err := compileSchema(&Schema{Name: "extraction", JSON: []byte(`{"type":"string"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if other == first {
		t.Fatal("another schema under the same name got the extraction's compilation")
	}
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := StructuredOutput[Extraction](ExtractionSchema(), `not JSON`); !errors.Is(err, ErrSchema) {
			t.Fatalf("err=%v, want ErrSchema", err)
		}
	})
	if allocs > 200 {
		t.Fatalf("StructuredOutput allocates %.0f times per call, want a compiled schema reused (a compilation costs thousands)", allocs)
	}
}
