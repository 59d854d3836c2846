package store

import (
	"encoding/json"
	"testing"
)

// TestMarshalSnapshot checks that marshalSnapshot writes what json.Marshal
// writes, escapes included.
func TestMarshalSnapshot(t *testing.T) {
	for _, s := range []ContextSnapshot{
		{},
		EmptyContextSnapshot(),
		{DecisionIDs: []string{"0190a4b2-7c1d-7e3f-8a9b-0c1d2e3f4a5b", "b"}, WarningIDs: []string{}, FindingIDs: []string{"c"},
			Summaries: []string{"Decision: plain", `Warning: "quoted" \ <b> & co`, "Finding: tab\tline\u2028é 日本", "bad \xff byte", "del \x7f", "nul \x00"}},
	} {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := marshalSnapshot(s); got != string(want) {
			t.Errorf("marshalSnapshot(%#v)\n got %s\nwant %s", s, got, want)
		}
	}
}
