package web

import "testing"

func TestPlanFileName(t *testing.T) {
	for _, tt := range []struct {
		title   string
		version int
		want    string
	}{
		{"Billing export", 1, "billing-export-plan-v1.md"},
		{"  JWT   migration: v2!  ", 3, "jwt-migration-v2-plan-v3.md"},
		{"Ünïcode ✨ only", 2, "n-code-only-plan-v2.md"},
		{"✨✨", 1, "plan-v1.md"},
		{"", 4, "plan-v4.md"},
		{`quote" and ; semicolon`, 1, "quote-and-semicolon-plan-v1.md"},
	} {
		if got := planFileName(tt.title, tt.version); got != tt.want {
			t.Errorf("planFileName(%q, %d) = %q, want %q", tt.title, tt.version, got, tt.want)
		}
	}
}
