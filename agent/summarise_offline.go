package agent

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/baton-dev/baton/store"
)

// OfflineSummariserModel is the Model of summaries the rules write.
const OfflineSummariserModel = "offline-rules"

// RuleSummariser writes handoff summaries by rules, without a model: the
// decisions so far (pinned replies and decision-bearing sentences), the
// open questions (the user's latest unanswered ones), the files named, the
// risks raised and the next step (the goal, or the user's latest ask).
// It is deterministic and cheap: a selection of 25 messages takes well
// under a millisecond.
var RuleSummariser Summariser = ruleSummariser{}

type ruleSummariser struct{}

// Limits on the bullets of a rule summary, per kind.
const (
	ruleDecisions = 4
	ruleQuestions = 2
	ruleFiles     = 5
	ruleRisks     = 2
)

var (
	// riskCue marks a sentence that raises a risk.
	riskCue = regexp.MustCompile(`(?i)\b(risk|risky|concern|danger|careful|could break|might break|could fail|might fail|worr(y|ied)|race|data loss|lose data|regression)\b`)
	// sourceExts are the file extensions that make a bare word a path.
	sourceExts = map[string]bool{"go": true, "sql": true, "md": true, "ts": true, "tsx": true, "js": true, "py": true,
		"rs": true, "yaml": true, "yml": true, "json": true, "toml": true, "templ": true, "css": true, "html": true,
		"sh": true, "txt": true}
)

// Summarise writes the rule summary of in.
func (ruleSummariser) Summarise(_ context.Context, in SummaryInput) (*Summary, error) {
	msgs := in.Selection.Messages
	sum := &Summary{Model: OfflineSummariserModel}
	add := func(kind, text string, sources ...string) {
		sum.Body = append(sum.Body, store.SummaryPoint{Kind: kind, Text: text, Sources: sources})
	}
	seen := map[string]bool{}
	fresh := func(s string) bool {
		k := strings.ToLower(s)
		if seen[k] {
			return false
		}
		seen[k] = true
		return true
	}

	// Decisions: pinned replies first, then decision-bearing sentences,
	// the latest ones (corrections come later in a thread).
	var decisions []store.SummaryPoint
	for _, m := range msgs {
		if m.Pinned {
			if s := firstSentence(m.Content); s != "" && fresh(s) {
				decisions = append(decisions, store.SummaryPoint{Kind: store.PointDecision, Text: s, Sources: []string{m.ID}})
			}
		}
	}
	for i := len(msgs) - 1; i >= 0 && len(decisions) < ruleDecisions; i-- {
		for _, s := range sentences(msgs[i].Content) {
			if settles(Words(s)) && fresh(s) {
				decisions = append(decisions, store.SummaryPoint{Kind: store.PointDecision, Text: s, Sources: []string{msgs[i].ID}})
				break
			}
		}
	}
	if len(decisions) > ruleDecisions {
		decisions = decisions[:ruleDecisions]
	}
	sum.Body = append(sum.Body, decisions...)

	// Open questions: the user's latest questions.
	var questions int
	for i := len(msgs) - 1; i >= 0 && questions < ruleQuestions; i-- {
		if msgs[i].Role != store.RoleUser {
			continue
		}
		for _, s := range sentences(msgs[i].Content) {
			if strings.HasSuffix(s, "?") && fresh(s) {
				add(store.PointQuestion, s, msgs[i].ID)
				questions++
				break
			}
		}
	}

	// Files: every path named, first mention first, as one bullet each.
	var files int
	for _, m := range msgs {
		for _, p := range pathsIn(m.Content) {
			if files < ruleFiles && fresh("file:"+p) {
				add(store.PointFile, "`"+p+"`", m.ID)
				files++
			}
		}
	}

	// Risks: the latest sentences that raise one.
	var risks int
	for i := len(msgs) - 1; i >= 0 && risks < ruleRisks; i-- {
		for _, s := range sentences(msgs[i].Content) {
			if riskCue.MatchString(s) && fresh(s) {
				add(store.PointRisk, s, msgs[i].ID)
				risks++
				break
			}
		}
	}

	// Next step: the goal, or what the user asked last.
	switch {
	case strings.TrimSpace(in.Goal) != "":
		add(store.PointNext, oneLine(in.Goal))
	default:
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].Role == store.RoleUser {
				add(store.PointNext, "Continue from: "+firstSentence(msgs[i].Content), msgs[i].ID)
				break
			}
		}
	}

	sum.Title = ContinuedTitle(in.ThreadTitle)
	if g := oneLine(in.Goal); g != "" {
		sum.Title = g
	}
	sum.TLDR = ruleTLDR(sum.Body, len(msgs))
	return sanitizeSummary(sum, in), nil
}

// ruleTLDR is one sentence counting what the summary holds.
func ruleTLDR(body []store.SummaryPoint, drawnOn int) string {
	n := map[string]int{}
	for _, p := range body {
		n[p.Kind]++
	}
	count := func(k int, one, many string) string { return fmt.Sprintf("%d %s", k, plural(k, one, many)) }
	parts := []string{count(n[store.PointDecision], "decision", "decisions")}
	if n[store.PointQuestion] > 0 {
		parts = append(parts, count(n[store.PointQuestion], "open question", "open questions"))
	}
	if n[store.PointFile] > 0 {
		parts = append(parts, count(n[store.PointFile], "file", "files"))
	}
	if n[store.PointRisk] > 0 {
		parts = append(parts, count(n[store.PointRisk], "risk", "risks"))
	}
	return "From " + count(drawnOn, "message", "messages") + ": " + strings.Join(parts, ", ") + "."
}

// sentences splits text into trimmed sentences of one line each; code
// blocks are skipped.
func sentences(text string) []string {
	var out []string
	inCode := false
	for line := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inCode = !inCode
			continue
		}
		if inCode {
			continue
		}
		line = strings.TrimLeft(strings.TrimSpace(line), "-*#>0123456789. ")
		// A sentence ends at a run of . ! ? followed by a space or the end.
		start := 0
		for i := 0; i < len(line); i++ {
			if !isStop(line[i]) {
				continue
			}
			for i+1 < len(line) && isStop(line[i+1]) {
				i++
			}
			if i+1 == len(line) || line[i+1] == ' ' || line[i+1] == '\t' {
				if s := strings.TrimSpace(line[start : i+1]); len(s) > 3 {
					out = append(out, s)
				}
				start = i + 1
			}
		}
		if s := strings.TrimSpace(line[start:]); len(s) > 3 {
			out = append(out, s)
		}
	}
	return out
}

func isStop(b byte) bool { return b == '.' || b == '!' || b == '?' }

// firstSentence is the first sentence of text, or "".
func firstSentence(text string) string {
	if s := sentences(text); len(s) > 0 {
		return s[0]
	}
	return ""
}

// pathsIn returns the file paths text names, in code spans or bare, each
// cleaned by store.CleanPath (which refuses URLs, absolute paths and "..").
func pathsIn(text string) []string {
	var out []string
	try := func(raw string) {
		if !strings.ContainsAny(raw, "/.") {
			return
		}
		if p, ok := store.CleanPath(raw); ok && strings.ContainsAny(p, "/.") && !strings.Contains(p, " ") {
			out = append(out, p)
		}
	}
	// Code spans first: between pairs of backticks on one line.
	var bare strings.Builder
	for line := range strings.SplitSeq(text, "\n") {
		parts := strings.Split(line, "`")
		for i, p := range parts {
			if i%2 == 1 && i < len(parts)-1 {
				try(p)
			} else {
				bare.WriteString(p)
				bare.WriteByte(' ')
			}
		}
	}
	// Then bare words with a source file extension.
	for _, w := range strings.Fields(bare.String()) {
		w = strings.TrimRight(strings.TrimLeft(w, "(\"'"), ").,;:!?\"'")
		if dot := strings.LastIndexByte(w, '.'); dot > 0 && sourceExts[w[dot+1:]] {
			try(w)
		}
	}
	return out
}
