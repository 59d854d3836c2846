package views

import (
	"strings"
	"testing"
)

// TestImageLinkIcon checks that an image in model output is a link with an
// inline SVG icon (no emoji font needed), and that SVG written in the
// markdown itself is still shown as text.
func TestImageLinkIcon(t *testing.T) {
	got := NewMarkdown().Render("See ![diagram](https://example.com/a.png) and <svg onload=alert(1)><path d='M0'/></svg>")
	if !strings.Contains(got, `<a class="image-link" href="https://example.com/a.png"`) || !strings.Contains(got, `<svg class="icon"`) {
		t.Errorf("Render=%s, want an image link with the SVG icon", got)
	}
	if strings.Contains(got, "🖼") {
		t.Errorf("Render=%s, want no emoji", got)
	}
	if strings.Contains(got, "onload") && !strings.Contains(got, "&lt;svg onload") {
		t.Errorf("Render=%s, want raw SVG escaped", got)
	}
	if strings.Count(got, "<svg") != 1 {
		t.Errorf("Render=%s, want exactly one svg element (the icon)", got)
	}
}
