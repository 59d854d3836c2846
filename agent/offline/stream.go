package offline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/baton-dev/baton/agent"
)

// chunkWords is how many words each streamed delta carries.
const chunkWords = 4

// Stream replies to req as a brainstorm partner. The reply is a markdown
// digest of the conversation so far (what sounds decided, files mentioned,
// open risks and questions) ending with a question that moves it on; it is
// the same for the same request. It is streamed in deltas of a few words;
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

// digest renders what the offline partner says about a conversation.
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
	b.WriteString("I pick out what the conversation says with simple rules; I don't understand it. Correct me where I'm wrong.\n")

	section := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n**%s**\n", title)
		for _, it := range items {
			fmt.Fprintf(&b, "- %s\n", it)
		}
	}
	var ds, fs, rs []string
	for _, d := range x.Decisions {
		ds = append(ds, oneLine(d.Content))
	}
	for _, f := range x.FilesReferenced {
		fs = append(fs, fmt.Sprintf("`%s` (%s)", f.Path, f.Relevance))
	}
	for _, r := range x.Risks {
		rs = append(rs, fmt.Sprintf("%s (%s)", oneLine(r.Description), r.Severity))
	}
	if len(ds) == 0 {
		b.WriteString("\nNothing sounds decided yet.\n")
	}
	section("Sounds decided", ds)
	section("Files mentioned", fs)
	section("Open risks", rs)
	qs := openQuestions(t)
	section("Open questions", qs)
	fmt.Fprintf(&b, "\n**Next:** %s\n", nextQuestion(t, x, qs))
	return b.String()
}

// oneLine keeps a digest item on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// openQuestions returns the questions of the last two messages.
func openQuestions(t *transcript) []string {
	var qs []string
	for i := max(0, len(t.msgs)-2); i < len(t.msgs); i++ {
		for _, s := range t.sents[i] {
			if strings.HasSuffix(s.plain, "?") && !injectionRE.MatchString(s.lower) {
				qs = append(qs, firstWords(oneLine(s.plain), 30))
			}
		}
	}
	if len(qs) > 3 {
		qs = qs[len(qs)-3:]
	}
	return qs
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

// nextQuestion asks what moves the brainstorm on: first what is still open,
// then an aspect the conversation has not touched.
func nextQuestion(t *transcript, x agent.Extraction, open []string) string {
	if len(open) > 0 {
		return fmt.Sprintf("Can we settle this one: “%s”", open[len(open)-1])
	}
	all := strings.ToLower(joinContents(t.msgs))
	for _, a := range aspects {
		seen := false
		for _, w := range a.words {
			if strings.Contains(all, w) {
				seen = true
				break
			}
		}
		if !seen {
			return a.question
		}
	}
	if len(x.Decisions) == 0 {
		return "What is the first thing you want to decide?"
	}
	return "Is anything above wrong or missing before you move to planning?"
}

// joinContents joins the text of all messages.
func joinContents(ms []agent.TranscriptMessage) string {
	var b strings.Builder
	for _, m := range ms {
		b.WriteString(m.Content)
		b.WriteString("\n")
	}
	return b.String()
}
