package offline

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/baton-dev/baton/agent"
)

// isPlanRequest reports whether req comes from the plan agent's loop: it
// offers get_handoff_context and complete_planning.
func isPlanRequest(req agent.Request) bool {
	var ctx, complete bool
	for _, t := range req.Tools {
		ctx = ctx || t.Name == agent.ToolGetHandoffContext
		complete = complete || t.Name == agent.ToolCompletePlanning
	}
	return ctx && complete
}

// planState is what a planning conversation has done so far, read from its
// messages: the policy keeps no state of its own.
type planState struct {
	context   *agent.HandoffContext // the last context get_handoff_context returned
	wrote     bool                  // an assistant reply has text
	completed bool                  // complete_planning succeeded
	replies   int                   // assistant replies so far
}

func readPlanState(msgs []agent.Message) planState {
	var st planState
	names := map[string]string{} // tool call ID → tool name
	for _, m := range msgs {
		if m.Role == agent.RoleAssistant {
			st.replies++
		}
		for _, part := range m.Parts {
			switch p := part.(type) {
			case agent.TextPart:
				st.wrote = st.wrote || (m.Role == agent.RoleAssistant && strings.TrimSpace(p.Text) != "")
			case agent.ToolCallPart:
				names[p.ID] = p.Name
			case agent.ToolResultPart:
				if p.IsError {
					continue
				}
				switch names[p.CallID] {
				case agent.ToolGetHandoffContext:
					var hc agent.HandoffContext
					if json.Unmarshal([]byte(p.Content), &hc) == nil {
						st.context = &hc
					}
				case agent.ToolCompletePlanning:
					st.completed = true
				}
			}
		}
	}
	return st
}

// streamPlan is the offline plan agent, a fixed policy run through the same
// tool loop as a model: it calls get_handoff_context, then writes a plan from
// the context the tool returned together with a call to complete_planning.
// It never calls any other tool, whatever the handoff's text says.
func (p *Provider) streamPlan(ctx context.Context, req agent.Request, emit func(agent.Delta) error) (*agent.Reply, error) {
	start := time.Now()
	st := readPlanState(req.Messages)
	var text string
	var calls []agent.ToolCallPart
	call := func(name string, input any) {
		b, _ := json.Marshal(input)
		calls = append(calls, agent.ToolCallPart{ID: fmt.Sprintf("offline-%d-%s", st.replies+1, name), Name: name, Input: b})
	}
	switch {
	case st.completed:
		// Nothing left to do; the loop ends on complete_planning before asking again.
	case st.context == nil:
		call(agent.ToolGetHandoffContext, struct{}{})
	case !st.wrote:
		pl := newOfflinePlan(*st.context)
		text = pl.markdown()
		call(agent.ToolCompletePlanning, map[string]string{"summary": pl.summary()})
	default:
		call(agent.ToolCompletePlanning, map[string]string{"summary": newOfflinePlan(*st.context).summary()})
	}

	var sent strings.Builder
	reply := func(complete bool) *agent.Reply {
		out := sent.String()
		parts := []agent.Part{}
		if out != "" {
			parts = append(parts, agent.TextPart{Text: out})
		}
		stop := agent.StopEnd
		outWords := words(out)
		if complete {
			for _, c := range calls {
				parts = append(parts, c)
				outWords += words(string(c.Input))
			}
			if len(calls) > 0 {
				stop = agent.StopToolUse
			}
		}
		sum := sha256.Sum256([]byte(out))
		return &agent.Reply{
			Parts:      parts,
			StopReason: stop,
			Usage: agent.Usage{
				InputTokens:  int64(requestWords(req)),
				OutputTokens: int64(outWords),
				ResponseID:   "offline-" + hex.EncodeToString(sum[:8]),
			},
			Model:    p.Model(),
			Duration: time.Since(start),
		}
	}
	for _, chunk := range chunks(text, chunkWords) {
		if err := ctx.Err(); err != nil {
			return reply(false), err
		}
		if err := emit(agent.Delta{Text: chunk}); err != nil {
			return reply(false), err
		}
		sent.WriteString(chunk)
	}
	return reply(true), nil
}

// requestWords counts the words a request sends, as its input "tokens".
func requestWords(req agent.Request) int {
	n := words(req.System)
	for _, m := range req.Messages {
		for _, part := range m.Parts {
			switch p := part.(type) {
			case agent.TextPart:
				n += words(p.Text)
			case agent.ToolResultPart:
				n += words(p.Content)
			case agent.ToolCallPart:
				n += words(string(p.Input))
			}
		}
	}
	return n
}

// offlinePlan is a plan built with rules from a handoff context.
type offlinePlan struct {
	hc    agent.HandoffContext
	files [][]int    // files[i]: indexes of the files decision i concerns
	uses  [][]string // uses[j]: labels of the decisions file j concerns
}

func newOfflinePlan(hc agent.HandoffContext) *offlinePlan {
	pl := &offlinePlan{hc: hc, files: make([][]int, len(hc.Decisions)), uses: make([][]string, len(hc.FilesReferenced))}
	contexts := make([]tokenSet, len(hc.FilesReferenced))
	inContexts := map[string]int{} // word → how many file contexts have it
	for j, f := range hc.FilesReferenced {
		contexts[j] = newTokenSet(lowerASCII(f.Context))
		for w := range contexts[j] {
			inContexts[w]++
		}
	}
	for i, d := range hc.Decisions {
		for j, f := range hc.FilesReferenced {
			if concerns(d.Content, f.Path, contexts[j], inContexts) {
				pl.files[i] = append(pl.files[i], j)
				pl.uses[j] = append(pl.uses[j], d.Label)
			}
		}
	}
	return pl
}

// genericWords are content words too common in file contexts to link a
// decision to a file on their own.
var genericWords = wordSet(`file files code chang change updat update add new need work handl handle
	function method logic support exist existing current place part where which`)

// concerns reports whether a decision concerns a file: the decision names
// the file's path or base name, or shares with the file's context a content
// word of four letters or more that no other file's context has (a word
// every file's context has says nothing about which file is meant).
func concerns(decision, filePath string, context tokenSet, inContexts map[string]int) bool {
	lower := lowerASCII(decision)
	p := lowerASCII(filePath)
	if p == "" {
		return false
	}
	if mentions(lower, p) || mentions(lower, path.Base(p)) {
		return true
	}
	for w := range newTokenSet(lower) {
		if _, ok := context[w]; ok && len(w) >= 4 && !genericWords[w] && inContexts[w] == 1 {
			return true
		}
	}
	return false
}

// mentions reports whether lower contains name as a whole word: not inside a
// longer name ("plan.go" is not mentioned by "myplan.go").
func mentions(lower, name string) bool {
	for i := 0; ; {
		k := strings.Index(lower[i:], name)
		if k < 0 {
			return false
		}
		at, end := i+k, i+k+len(name)
		before := at == 0 || !isNameByte(lower[at-1]) && lower[at-1] != '.'
		after := end == len(lower) || !isNameByte(lower[end])
		if before && after {
			return true
		}
		i = at + 1
	}
}

// isNameByte reports whether b continues a file name.
func isNameByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '_' || b == '-'
}

// markdown renders the plan.
func (pl *offlinePlan) markdown() string {
	hc := pl.hc
	var b strings.Builder
	b.WriteString("# Implementation plan\n\n## Overview\n\n")
	if s := oneLine(hc.Summary); s != "" {
		b.WriteString(s + "\n\n")
	} else {
		b.WriteString("The handoff has no summary.\n\n")
	}
	high := 0
	for _, r := range hc.Risks {
		if r.Severity == "high" {
			high++
		}
	}
	fmt.Fprintf(&b, "This plan turns %s into one step each, touches %s and watches %s (%d high). ",
		plural(len(hc.Decisions), "decision"), plural(len(hc.FilesReferenced), "file"), plural(len(hc.Risks), "risk"), high)
	b.WriteString("Baton's offline planner wrote it with simple rules from the frozen handoff; it does not read the code, so check each step before you start.\n")

	b.WriteString("\n## Steps\n")
	if len(hc.Decisions) == 0 {
		b.WriteString("\nThe handoff has no decisions, so there is nothing to plan yet.\n")
	}
	order, after := pl.order()
	stepOf := make([]int, len(hc.Decisions)) // decision → its step number
	for n, i := range order {
		stepOf[i] = n + 1
	}
	for n, i := range order {
		d := hc.Decisions[i]
		content := oneLine(d.Content)
		short := strings.TrimRight(firstWords(content, 14), ".!")
		fmt.Fprintf(&b, "\n### %d. %s (%s)\n\n", n+1, short, d.Label)
		if short != strings.TrimRight(content, ".!") {
			fmt.Fprintf(&b, "%s in full: %s\n\n", d.Label, content)
		}
		if deps := after[i]; len(deps) > 0 {
			var names []string
			for _, dep := range deps {
				names = append(names, fmt.Sprintf("step %d (%s)", stepOf[dep.on], dep.why))
			}
			fmt.Fprintf(&b, "- After: %s.\n", strings.Join(names, "; "))
		}
		if len(pl.files[i]) == 0 {
			b.WriteString("- Work: find the code this belongs in first; the handoff links no file to it.\n")
		} else {
			b.WriteString("- Work:\n")
			for _, j := range pl.files[i] {
				f := hc.FilesReferenced[j]
				fmt.Fprintf(&b, "  - %s %s (%s)", fileVerb(content, f), codeSpan(f.Path), f.Relevance)
				if c := withoutPathLead(oneLine(f.Context), f.Path); c != "" {
					b.WriteString(": " + c)
				}
				b.WriteString("\n")
			}
		}
		for _, r := range pl.risksOf(i) {
			if m := oneLine(r.Mitigation); m != "" {
				fmt.Fprintf(&b, "- Watch: %s. Agreed mitigation: %s\n", strings.TrimRight(oneLine(r.Description), "."), m)
			} else {
				fmt.Fprintf(&b, "- Watch: %s. No mitigation agreed yet.\n", strings.TrimRight(oneLine(r.Description), "."))
			}
		}
		var paths []string
		for _, j := range pl.files[i] {
			paths = append(paths, hc.FilesReferenced[j].Path)
		}
		fmt.Fprintf(&b, "- Done when: %s.\n", doneWhen(content, paths))
	}

	b.WriteString("\n## Files\n\n")
	if len(hc.FilesReferenced) == 0 {
		b.WriteString("The handoff names no files.\n")
	} else {
		b.WriteString("| File | Relevance | Decisions | Why |\n|---|---|---|---|\n")
		order := make([]int, len(hc.FilesReferenced))
		for j := range order {
			order[j] = j
		}
		slices.SortStableFunc(order, func(x, y int) int {
			return cmp.Compare(levelRank(hc.FilesReferenced[x].Relevance), levelRank(hc.FilesReferenced[y].Relevance))
		})
		for _, j := range order {
			f := hc.FilesReferenced[j]
			ds := strings.Join(pl.uses[j], ", ")
			if ds == "" {
				ds = "—"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", cell(codeSpan(f.Path)), cell(f.Relevance), ds, cell(oneLine(f.Context)))
		}
	}

	b.WriteString("\n## Risks\n\n")
	if len(hc.Risks) == 0 {
		b.WriteString("The handoff names no risks. Ask what could go wrong before you start.\n")
	}
	risks := slices.Clone(hc.Risks)
	slices.SortStableFunc(risks, func(x, y agent.ContextRisk) int {
		return cmp.Compare(levelRank(x.Severity), levelRank(y.Severity))
	})
	for _, r := range risks {
		fmt.Fprintf(&b, "- **%s severity:** %s\n", capitalise(r.Severity), oneLine(r.Description))
		if m := oneLine(r.Mitigation); m != "" {
			fmt.Fprintf(&b, "  - Mitigation: %s\n", m)
		} else if r.Severity == "low" {
			b.WriteString("  - Mitigation: none agreed yet; watch for it in review.\n")
		} else {
			b.WriteString("  - Mitigation: none agreed yet; agree one before the step it affects starts.\n")
		}
	}

	b.WriteString("\n## Open questions\n\n")
	qs := pl.openQuestions()
	if len(qs) == 0 {
		b.WriteString("- None found by the offline rules; read the steps once more before you start.\n")
	}
	for _, q := range qs {
		b.WriteString("- " + q + "\n")
	}
	return b.String()
}

// maxOpenQuestions caps the open questions of a plan.
const maxOpenQuestions = 12

// openQuestions lists what the handoff leaves open: decisions that read like
// instructions to an AI, unsure decisions, files no decision needs and
// serious risks without a mitigation. A decision without files is not a
// question: its step says to find where it lives.
func (pl *offlinePlan) openQuestions() []string {
	hc := pl.hc
	var qs []string
	for _, d := range hc.Decisions {
		if isInjection(lowerASCII(d.Content)) {
			qs = append(qs, fmt.Sprintf("%s reads like an instruction to an AI rather than a decision. It was planned as written, as text; confirm the team means it.", d.Label))
		}
		if d.Confidence != nil && *d.Confidence < 0.7 {
			qs = append(qs, fmt.Sprintf("Is %s really decided? It was extracted with confidence %.1f.", d.Label, *d.Confidence))
		}
	}
	var unused []string
	for j, f := range hc.FilesReferenced {
		if len(pl.uses[j]) == 0 {
			unused = append(unused, codeSpan(f.Path))
		}
	}
	switch len(unused) {
	case 0:
	case 1:
		qs = append(qs, fmt.Sprintf("Is %s in scope? No decision mentions it.", unused[0]))
	default:
		qs = append(qs, fmt.Sprintf("Are %s in scope? No decision mentions them.", andList(unused)))
	}
	for _, r := range hc.Risks {
		if oneLine(r.Mitigation) == "" && r.Severity != "low" {
			qs = append(qs, fmt.Sprintf("How will you handle the %s risk “%s”?", r.Severity, firstWords(oneLine(r.Description), 16)))
		}
	}
	if len(qs) > maxOpenQuestions {
		qs = append(qs[:maxOpenQuestions], fmt.Sprintf("…and %d more like these.", len(qs)-maxOpenQuestions))
	}
	return qs
}

// summary is complete_planning's summary of the plan.
func (pl *offlinePlan) summary() string {
	hc := pl.hc
	s := fmt.Sprintf("Offline plan with %s, one per decision", plural(len(hc.Decisions), "step"))
	if n := len(hc.Decisions); n > 0 {
		s += fmt.Sprintf(" (%s to %s)", hc.Decisions[0].Label, hc.Decisions[n-1].Label)
	}
	return s + fmt.Sprintf(", touching %s, with %s and %s.",
		plural(len(hc.FilesReferenced), "file"), plural(len(hc.Risks), "risk"), plural(len(pl.openQuestions()), "open question"))
}

// levelRank orders high, medium, low, then anything else.
func levelRank(l string) int {
	switch l {
	case "high":
		return 0
	case "medium":
		return 1
	case "low":
		return 2
	}
	return 3
}

// codeSpan shows a path as code, unless it holds a backtick.
func codeSpan(p string) string {
	if strings.Contains(p, "`") {
		return p
	}
	return "`" + p + "`"
}

// cell keeps text inside one markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(oneLine(s), "|", `\|`)
}

// capitalise upper-cases the first letter of an ASCII word.
func capitalise(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// andList joins items as prose: "a", "a and b", "a, b and c".
func andList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
