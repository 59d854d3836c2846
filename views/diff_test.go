package views_test

import (
	"strings"
	"testing"

	"github.com/baton-dev/baton/views"
)

func TestLineDiff(t *testing.T) {
	a := "# Plan\n## Steps\n1. one\n2. two\n## Risks\nnone"
	b := "# Plan\n## Steps\n1. one\n2. two, with rollback\n3. three\n## Risks\nnone"
	var got []string
	for _, l := range views.LineDiff(a, b) {
		got = append(got, l.Op.Prefix()+l.Text)
	}
	want := []string{"  # Plan", "  ## Steps", "  1. one", "- 2. two", "+ 2. two, with rollback", "+ 3. three", "  ## Risks", "  none"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("diff:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if add, del := views.DiffCounts(views.LineDiff(a, b)); add != 2 || del != 1 {
		t.Errorf("counts +%d -%d, want +2 -1", add, del)
	}
	if d := views.LineDiff(a, a); len(d) != 6 {
		t.Errorf("same text: %d lines, want 6 unchanged", len(d))
	}
}
