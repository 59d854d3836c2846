package offline

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/baton-dev/baton/agent"
)

// dependency says that a step comes after another, and why.
type dependency struct {
	on  int    // the decision it waits for
	why string // "creates `a.go`"
}

// Patterns of the plan's ordering rules. Each matches lower-cased text.
var (
	// createsRE marks a decision or file context that brings something new
	// into being: later work on the same file waits for it.
	createsRE = mustPattern(`\b(?:new|create|creates|add a|add an|introduce|scaffold|bootstrap|migration|schema|table)\b`)
	// testStepRE marks a decision about tests, which wait for what they test.
	testStepRE = mustPattern(`^(?:add |write |cover |extend )?(?:an? )?(?:unit |integration |end-to-end |e2e |load |request |smoke )?tests?\b|\btests? (?:for|of|that|in)\b`)
	// afterRE finds "after X", "once X" or "when X is done" in a decision.
	afterRE = mustPattern(`\b(?:after|once|following)\s+(.{4,80}?)(?:[,;.]|$)`)
	// firstRE marks a decision said to come first as a whole: it opens or
	// ends with "first" ("first, back up the table", "merge on id first").
	// "loaders first" inside a decision orders its own parts, not the plan.
	firstRE = mustPattern(`^(?:first|start with|begin with)\b|\bfirst[.!]?$|\bbefore (?:anything|all)\b`)
)

// order returns the decisions in the order their steps should run, and for
// each decision the steps it waits for. A step waits for a step that
// creates a file it touches (a new file, a migration), for the step its
// decision says it comes "after" or "once", and a test step waits for the
// steps whose files it shares. Otherwise the handoff's order stands.
func (pl *offlinePlan) order() ([]int, [][]dependency) {
	hc := pl.hc
	n := len(hc.Decisions)
	after := make([][]dependency, n)
	lower := make([]string, n)
	sets := make([]tokenSet, n)
	for i, d := range hc.Decisions {
		lower[i] = lowerASCII(d.Content)
		sets[i] = newTokenSet(lower[i])
	}
	add := func(i, on int, why string) {
		if i == on {
			return
		}
		for _, d := range after[i] {
			if d.on == on {
				return
			}
		}
		after[i] = append(after[i], dependency{on: on, why: why})
	}
	for i := range hc.Decisions {
		for j := range hc.Decisions {
			if i == j {
				continue
			}
			shared := sharedFiles(pl.files[i], pl.files[j])
			if len(shared) == 0 {
				continue
			}
			f := hc.FilesReferenced[shared[0]]
			base := lowerASCII(path.Base(f.Path))
			// j creates the file i also touches.
			creates := createsRE.MatchString(lower[j]) && (mentions(lower[j], lowerASCII(f.Path)) || mentions(lower[j], base)) ||
				createsRE.MatchString(lowerASCII(f.Context)) && !createsRE.MatchString(lower[i]) && j < i
			if creates && !testStepRE.MatchString(lower[j]) {
				add(i, j, "creates "+codeSpan(f.Path))
			}
			if testStepRE.MatchString(lower[i]) && !testStepRE.MatchString(lower[j]) {
				add(i, j, "it tests "+codeSpan(f.Path))
			}
		}
		// "after the migration", "once X is in place".
		if m := afterRE.FindStringSubmatch(lower[i]); m != nil {
			want := newTokenSet(m[1])
			best, bestN := -1, 0
			for j := range hc.Decisions {
				if j == i {
					continue
				}
				if k := looseOverlap(want, sets[j]); k > bestN {
					best, bestN = j, k
				}
			}
			if best >= 0 && bestN*2 >= len(want) {
				add(i, best, "the decision says it comes after it")
			}
		}
	}
	// A decision said to come first goes before the ones that do not say so.
	for i := range hc.Decisions {
		if !firstRE.MatchString(lower[i]) {
			continue
		}
		for j := range hc.Decisions {
			if j != i && !firstRE.MatchString(lower[j]) && !dependsOn(after, i, j) {
				add(j, i, "it comes first")
			}
		}
	}
	return topoOrder(n, after), after
}

// dependsOn reports whether i waits for j, directly or through others.
func dependsOn(after [][]dependency, i, j int) bool {
	seen := map[int]bool{}
	var walk func(k int) bool
	walk = func(k int) bool {
		if k == j {
			return true
		}
		if seen[k] {
			return false
		}
		seen[k] = true
		for _, d := range after[k] {
			if walk(d.on) {
				return true
			}
		}
		return false
	}
	return walk(i)
}

// topoOrder orders 0..n-1 so that every index comes after the ones it
// waits for, keeping the given order where nothing says otherwise. Waits
// that would form a cycle are dropped from the later index.
func topoOrder(n int, after [][]dependency) []int {
	done := make([]bool, n)
	var out []int
	for len(out) < n {
		progress := false
		for i := 0; i < n; i++ {
			if done[i] {
				continue
			}
			ready := true
			for _, d := range after[i] {
				ready = ready && done[d.on]
			}
			if ready {
				done[i] = true
				out = append(out, i)
				progress = true
				break // restart, so that the earliest ready index goes next
			}
		}
		if !progress {
			// A cycle: take the first pending index and forget its waits.
			for i := 0; i < n; i++ {
				if !done[i] {
					after[i] = slices.DeleteFunc(after[i], func(d dependency) bool { return !done[d.on] })
					break
				}
			}
		}
	}
	return out
}

// sharedFiles returns the file indexes both lists hold.
func sharedFiles(a, b []int) []int {
	var out []int
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// risksOf returns the risks that concern decision i: they share a content
// word of four letters or more with it, or its mitigation names it.
func (pl *offlinePlan) risksOf(i int) []agent.ContextRisk {
	d := newTokenSet(lowerASCII(pl.hc.Decisions[i].Content))
	var out []agent.ContextRisk
	for _, r := range pl.hc.Risks {
		rs := newTokenSet(lowerASCII(r.Description + " " + r.Mitigation))
		n := 0
		for w := range rs {
			if _, ok := d[w]; ok && len(w) >= 4 && !genericWords[w] {
				n++
			}
		}
		if n >= 2 || n == 1 && len(d) <= 4 {
			out = append(out, r)
		}
	}
	return out
}

// fileVerb says what a step does to a file: "Create" when the decision or
// the file's context says it is new, "Remove" when the decision removes it,
// "Change" otherwise.
func fileVerb(decision string, f agent.ContextFile) string {
	lc := lowerASCII(decision)
	named := mentions(lc, lowerASCII(f.Path)) || mentions(lc, lowerASCII(path.Base(f.Path)))
	switch {
	case named && removeRE.MatchString(lc):
		return "Remove"
	case newFileRE.MatchString(lowerASCII(f.Context)) || named && newFileRE.MatchString(lc):
		return "Create"
	}
	return "Change"
}

// removeRE marks a decision that takes something away.
var removeRE = mustPattern(`\b(?:remove|delete|drop)\b`)

// newFileRE marks a file that does not exist yet.
var newFileRE = mustPattern(`^new\b|\b(?:new file|create|created|(?:a|an) new)\b`)

// onScreen is the check of a step that changes what people see.
const onScreen = "a component or browser test shows “%s” on screen"

// doneKinds are kinds of work, each with the words that name it and the
// check that shows a step of that kind is done.
var doneKinds = []struct {
	re    *pattern
	check string
}{
	{testStepRE, "the tests for “%s” run in CI, pass, and fail when the behaviour they cover is removed"},
	// "Keep wkhtmltopdf for now": nothing to build, only to keep true.
	{mustPattern(`^(?:keep|stay|stick|leave|continue)\b`), "the other steps are in and “%s” still holds: nothing in the diff replaces it"},
	{mustPattern(`\b(?:migrat\w*|schema|table|column|index|backfill)\b`), "the migration for “%s” applies and rolls back cleanly on a copy of the real data"},
	{mustPattern(`\b(?:remove|delete|drop|retire)\b`), "nothing references what “%s” takes away, and the build and tests pass"},
	{mustPattern(`\b(?:endpoint|route|api|request|response|header|status|[1-5]\d\d)\b`), "an integration test sends a request and gets back what “%s” promises"},
	{mustPattern(`\b(?:metric|alert|alarm|log|logs|dashboard|monitor\w*|trace)\b`), "the signal from “%s” shows up where the team watches, checked once in staging"},
	{mustPattern(`\b(?:config|setting|env|environment variable|flag|yaml|toml|default)\b`), "the setting of “%s” is read at start-up, and its default is documented"},
	{mustPattern(`\b(?:page|screen|button|banner|component|view|form|ui|modal)\b`), onScreen},
	{mustPattern(`\b(?:doc|docs|readme|runbook|document)\b`), "the text for “%s” is merged and a teammate has followed it once"},
}

// doneWhen says how to tell a step is finished, specific to its decision
// and the files it changes: a step whose files are all code without a
// screen ("a view with the date filter" in events_clean.sql) is not
// checked on screen.
func doneWhen(decision string, files []string) string {
	short := strings.TrimRight(firstWords(decision, 10), ".!")
	lc := lowerASCII(decision)
	for _, k := range doneKinds {
		if k.re.MatchString(lc) && !(k.check == onScreen && len(files) > 0 && !slices.ContainsFunc(files, isUIFile)) {
			return fmt.Sprintf(k.check, short)
		}
	}
	return fmt.Sprintf("a test exercises “%s” and fails without the change", short)
}

// uiExtensions are the extensions of files that draw a screen.
var uiExtensions = wordSet(`tsx jsx vue svelte html htm css scss sass less astro swift kt dart xaml qml razor cshtml erb hbs ejs pug twig liquid njk heex eex leex storyboard xib templ`)

// isUIFile reports whether the file at p draws a screen.
func isUIFile(p string) bool {
	ext := path.Ext(p)
	return ext != "" && uiExtensions[lowerASCII(ext[1:])]
}

// withoutPathLead drops a leading "path:" or "name.go:" from a file's
// context, which the step already names.
func withoutPathLead(context, filePath string) string {
	for _, lead := range []string{filePath + ":", path.Base(filePath) + ":"} {
		if rest, ok := strings.CutPrefix(context, lead); ok {
			return strings.TrimSpace(rest)
		}
	}
	return context
}
