package views

import "testing"

func TestFirstSentence(t *testing.T) {
	for _, tt := range []struct {
		name, markdown, want string
	}{
		{"plain", "Use HS256 for the tokens. The secret comes from JWT_SECRET.", "Use HS256 for the tokens."},
		{"markdown removed", "Keep the **refresh token** in an `HttpOnly` cookie, see [the docs](https://example.com). Then rotate it.",
			"Keep the refresh token in an HttpOnly cookie, see the docs."},
		{"heading and preamble skipped", "## Plan\n\nHere is how I would do it. The access token stays in memory.\n\n- one\n- two",
			"The access token stays in memory."},
		{"offline digest", "**Offline digest** (no model configured)\n\nI pick out what the conversation says with simple rules; I don't understand it. " +
			"Correct me where I'm wrong.\n\n**Sounds decided**\n- Mobile clients keep working\n\n**Open questions**\n- Can you sketch a plan?",
			"Mobile clients keep working"},
		{"questions and labels skipped", "What do you think?\n\nWhat changes:\n\n1. Session setup lives in `session.ts` now\n",
			"Session setup lives in session.ts now"},
		{"bold label prefix", "**Next:** Ship the middleware behind a flag.", "Ship the middleware behind a flag."},
		{"code only falls back", "```go\nfunc main() {}\n```\n\nOK?", "OK?"},
		{"empty", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := FirstSentence(tt.markdown); got != tt.want {
				t.Errorf("FirstSentence = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFirstSentenceClipped(t *testing.T) {
	long := "Decide "
	for range 100 {
		long += "this and "
	}
	got := []rune(FirstSentence(long + "that."))
	if len(got) != maxSentence || got[len(got)-1] != '…' {
		t.Errorf("FirstSentence of a long sentence: %d characters ending %q, want %d ending …", len(got), got[len(got)-1], maxSentence)
	}
}
