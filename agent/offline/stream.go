package offline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/baton-dev/baton/agent"
)

// chunkWords is how many words each streamed delta carries.
const chunkWords = 4

// Stream replies to req as a brainstorm partner. The reply (see digest)
// answers the latest message: what it added, one question that moves the
// brainstorm on and was not asked before in the thread, and a one-line count
// of everything so far; it is the same for the same request. It is streamed in deltas of a few words;
// ctx is checked between deltas, and when it is cancelled Stream returns the
// reply so far together with ctx's error. When req.Schema is set the reply is
// the extraction JSON instead. A request of the plan agent (see
// isPlanRequest) is answered by the offline plan policy; other tools are
// ignored.
func (p *Provider) Stream(ctx context.Context, req agent.Request, emit func(agent.Delta) error) (*agent.Reply, error) {
	if isPlanRequest(req) {
		return p.streamPlan(ctx, req, emit)
	}
	start := time.Now()
	msgs := transcriptOf(req.Messages)
	var text string
	if req.Schema != nil {
		x := extract(msgs[max(0, len(msgs)-agent.MaxTranscriptMessages):])
		b, err := json.Marshal(x)
		if err != nil {
			return nil, fmt.Errorf("offline: encode extraction: %w", err)
		}
		text = string(b)
	} else {
		text = digest(msgs)
	}

	var sent strings.Builder
	reply := func() *agent.Reply {
		out := sent.String()
		in := int64(words(req.System))
		for _, m := range msgs {
			in += int64(words(m.Content))
		}
		sum := sha256.Sum256([]byte(out))
		return &agent.Reply{
			Parts:      []agent.Part{agent.TextPart{Text: out}},
			StopReason: agent.StopEnd,
			Usage: agent.Usage{
				InputTokens:  in,
				OutputTokens: int64(words(out)),
				ResponseID:   "offline-" + hex.EncodeToString(sum[:8]),
			},
			Model:    p.Model(),
			Duration: time.Since(start),
		}
	}
	for _, chunk := range chunks(text, chunkWords) {
		if err := ctx.Err(); err != nil {
			return reply(), err
		}
		if err := emit(agent.Delta{Text: chunk}); err != nil {
			return reply(), err
		}
		sent.WriteString(chunk)
	}
	return reply(), nil
}

// transcriptOf keeps the text of req's messages.
func transcriptOf(ms []agent.Message) []agent.TranscriptMessage {
	out := make([]agent.TranscriptMessage, 0, len(ms))
	for _, m := range ms {
		var b strings.Builder
		for _, part := range m.Parts {
			if t, ok := part.(agent.TextPart); ok {
				if b.Len() > 0 {
					b.WriteString("\n")
				}
				b.WriteString(t.Text)
			}
		}
		if b.Len() > 0 {
			out = append(out, agent.TranscriptMessage{Role: m.Role, Content: b.String()})
		}
	}
	return out
}

// chunks splits s into pieces of n words each, keeping every byte of s.
func chunks(s string, n int) []string {
	var out []string
	count, start := 0, 0
	inWord := false
	for i, r := range s {
		space := r == ' ' || r == '\n' || r == '\t'
		if !space && !inWord {
			if count == n {
				out = append(out, s[start:i])
				start, count = i, 0
			}
			count++
		}
		inWord = !space
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// digest renders the offline partner's reply to the latest message: what
// it heard there that is new (decisions, files, risks, the user's own
// questions), one question that moves the brainstorm on and has not been
// asked before in the thread, and a one-line count of everything so far.
// Replies are rendered as markdown without raw HTML, so nothing can be
// folded away: the reply stays short instead, and the full lists live in
// the handoff preview.
func digest(msgs []agent.TranscriptMessage) string {
	var b strings.Builder
	b.WriteString(digestHeader + " (no model configured)\n\n")
	if len(msgs) == 0 {
		b.WriteString("Nothing to digest yet. What are you trying to build or change?\n")
		return b.String()
	}
	window := msgs[max(0, len(msgs)-agent.MaxTranscriptMessages):]
	t := newTranscript(window)
	x := extract(window)
	last := len(window) - 1
	for last > 0 && window[last].Role != agent.RoleUser {
		last--
	}

	var heard []string
	for _, d := range x.Decisions {
		if slices.Contains(d.Sources, last) {
			heard = append(heard, "Decision: "+oneLine(firstWords(d.Content, 24)))
		}
	}
	for _, f := range x.FilesReferenced {
		if slices.Contains(f.Sources, last) {
			heard = append(heard, fmt.Sprintf("File: `%s`", f.Path))
		}
	}
	for _, r := range x.Risks {
		if slices.Contains(r.Sources, last) {
			heard = append(heard, fmt.Sprintf("Risk (%s): %s", r.Severity, oneLine(firstWords(r.Description, 24))))
		}
	}
	qs := questionsOf(t, last)
	for _, q := range qs {
		heard = append(heard, fmt.Sprintf("Your question: “%s” I can't answer it offline; it stays open for the team.", q))
	}
	if len(heard) == 0 {
		b.WriteString("I found nothing new to note in your last message; my rules may have missed it, so say it as a decision (\"let's …\") if it is one.\n")
	} else {
		b.WriteString("Heard in your last message:\n")
		for _, h := range heard {
			fmt.Fprintf(&b, "- %s\n", h)
		}
	}
	fmt.Fprintf(&b, "\n%s%s\n", nextPrefix, nextQuestion(t, x, askedBefore(msgs)))
	fmt.Fprintf(&b, "\nSo far: %s, %s, %s, picked out by simple rules; correct me where they're wrong.\n", plural(len(x.Decisions), "decision"), plural(len(x.FilesReferenced), "file"), plural(len(x.Risks), "risk"))
	return b.String()
}

// oneLine keeps a digest item on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// questionsOf returns the questions message i asks, at most three.
func questionsOf(t *transcript, i int) []string {
	var qs []string
	for _, s := range t.sents[i] {
		if strings.HasSuffix(s.plain, "?") && !isInjection(s.lower) {
			qs = append(qs, firstWords(oneLine(s.plain), 30))
		}
	}
	if len(qs) > 3 {
		qs = qs[len(qs)-3:]
	}
	return qs
}

// fileLikeRE finds a word that names a file.
var fileLikeRE = mustPattern(`\w[\w-]*\.[a-z]{1,5}\b|/\w`)

// nextPrefix opens the partner's question in every digest.
const nextPrefix = "**Next:** "

// askedBefore returns the questions earlier digests of the thread asked.
func askedBefore(msgs []agent.TranscriptMessage) map[string]bool {
	asked := map[string]bool{}
	for _, m := range msgs {
		if m.Role != agent.RoleAssistant || !strings.HasPrefix(m.Content, digestHeader) {
			continue
		}
		for line := range strings.SplitSeq(m.Content, "\n") {
			if q, ok := strings.CutPrefix(line, nextPrefix); ok {
				asked[strings.TrimSpace(q)] = true
			}
		}
	}
	return asked
}

// aspects are parts of a plan a brainstorm often forgets, with the question
// that brings each up and the words that show it was discussed.
var aspects = []struct {
	words    []string
	question string
}{
	{[]string{"test"}, "How will you test this: which cases would tell you it works?"},
	{[]string{"migrat", "backfill", "schema", "existing data", "backward"}, "Does existing data or behaviour need a migration or a compatibility path?"},
	{[]string{"rollout", "roll out", "deploy", "release", "feature flag", "ship"}, "How will this roll out: all at once, behind a flag, or gradually?"},
	{[]string{"monitor", "metric", "alert", "log"}, "How will you know in production that it works, or that it broke?"},
	{[]string{"secur", "auth", "permission", "secret"}, "Who may do this, and what must an attacker not be able to do?"},
}

// fallbackQuestions are asked, once each, when nothing specific is open.
var fallbackQuestions = []string{
	"What is the first thing you want to decide?",
	"Which of these decisions would be the most expensive to get wrong?",
	"What would make you change one of these decisions?",
	"Is anything missing before you move to planning?",
}

// nextQuestion picks one question that moves the brainstorm on and that no
// earlier digest asked: a serious risk nobody has answered, then a part of
// the work the conversation has not touched, then a decision that sounds
// unsure, then a general one. When every question has been asked it says
// so rather than ask one again.
func nextQuestion(t *transcript, x agent.Extraction, asked map[string]bool) string {
	var cands []string
	for _, sev := range []agent.Severity{agent.SeverityHigh} {
		for _, r := range x.Risks {
			if r.Severity == sev && r.Mitigation == "" {
				cands = append(cands, fmt.Sprintf("How will you handle the risk that %s?", lowerFirst(strings.TrimRight(oneLine(firstWords(r.Description, 20)), ".?!"))))
			}
		}
	}
	all := lowerASCII(joinContents(t))
	for _, a := range aspects {
		seen := false
		for _, w := range a.words {
			if strings.Contains(all, w) {
				seen = true
				break
			}
		}
		if !seen {
			cands = append(cands, a.question)
		}
	}
	for _, r := range x.Risks {
		if r.Severity == agent.SeverityMedium && r.Mitigation == "" {
			cands = append(cands, fmt.Sprintf("How will you handle the risk that %s?", lowerFirst(strings.TrimRight(oneLine(firstWords(r.Description, 20)), ".?!"))))
		}
	}
	for _, d := range x.Decisions {
		if !fileLikeRE.MatchString(d.Content) && d.Confidence >= 0.7 {
			cands = append(cands, fmt.Sprintf("Where does “%s” happen in the code: which files change?", strings.TrimRight(oneLine(firstWords(d.Content, 12)), ".")))
		}
	}
	for _, d := range x.Decisions {
		if d.Confidence < 0.7 {
			cands = append(cands, fmt.Sprintf("Is “%s” decided, or still open?", strings.TrimRight(oneLine(firstWords(d.Content, 16)), ".")))
		}
	}
	if len(x.Decisions) > 0 {
		cands = append(cands, fallbackQuestions[1:]...)
	} else {
		cands = append(cands, fallbackQuestions[0])
	}
	for _, q := range cands {
		if !asked[q] {
			return q
		}
	}
	return "Nothing new to ask from me: when the list looks right, write the handoff."
}

// joinContents joins the text of the messages the rules read: not earlier
// digests, whose own questions would count as discussed.
func joinContents(t *transcript) string {
	var b strings.Builder
	for _, s := range t.all {
		b.WriteString(s.lower)
		b.WriteString("\n")
	}
	return b.String()
}
