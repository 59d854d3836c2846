package store

import (
	"path"
	"strings"
	"unicode"
)

// DecisionScope is the scope of a decision that concerns paths: their
// deepest common directory ("src/auth" for src/auth/jwt.ts and
// src/auth/session.ts), or ProjectScope when there is no path or no
// directory they share.
func DecisionScope(paths []string) string {
	var common []string
	for i, p := range paths {
		dir := path.Dir(strings.Trim(p, "/"))
		if dir == "." || dir == "" {
			return ProjectScope
		}
		segs := strings.Split(dir, "/")
		if i == 0 {
			common = segs
			continue
		}
		n := 0
		for n < len(common) && n < len(segs) && common[n] == segs[n] {
			n++
		}
		common = common[:n]
		if n == 0 {
			return ProjectScope
		}
	}
	if len(common) == 0 {
		return ProjectScope
	}
	return strings.Join(common, "/")
}

// mentionsFile reports whether text names the file at p: its path, or its
// base name as a word of its own (jwt.ts, not myjwt.ts).
func mentionsFile(text, p string) bool {
	lt, lp := strings.ToLower(text), strings.ToLower(p)
	if lp == "" {
		return false
	}
	if strings.Contains(lt, lp) {
		return true
	}
	base := path.Base(lp)
	for i := 0; ; {
		j := strings.Index(lt[i:], base)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(base)
		before := start == 0 || !isNameByte(lt[start-1])
		after := end == len(lt) || !isNameByte(lt[end]) || (lt[end] == '.' && (end+1 == len(lt) || !isNameByte(lt[end+1])))
		if before && after {
			return true
		}
		i = start + 1
	}
}

func isNameByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '_' || b == '-' || b == '.' || b >= 0x80
}

// refersToLabel reports whether text cites a decision label such as D2 as a word.
func refersToLabel(text, label string) bool {
	if label == "" {
		return false
	}
	for i := 0; ; {
		j := strings.Index(text[i:], label)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(label)
		if (start == 0 || !isWordRune(rune(text[start-1]))) && (end == len(text) || !isWordRune(rune(text[end]))) {
			return true
		}
		i = start + 1
	}
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }

// decisionConcernsFile reports whether the snapshot ties a decision to a
// file: the decision names the file, the file's reason cites the decision's
// label, or the two share at least two subject words.
func decisionConcernsFile(d SnapshotDecision, f SnapshotFile) bool {
	return mentionsFile(d.Content, f.Path) || refersToLabel(f.Context, d.Label) ||
		sharedSubjectWords(d.Content, f.Context) >= 2
}

// riskNamesFile reports whether a risk or its mitigation names the file.
func riskNamesFile(r SnapshotRisk, p string) bool {
	return mentionsFile(r.Description, p) || mentionsFile(r.Mitigation, p)
}

// riskConcernsDecision reports whether a risk cites the decision's label or
// shares at least two subject words with it.
func riskConcernsDecision(r SnapshotRisk, d SnapshotDecision) bool {
	return refersToLabel(r.Description, d.Label) || refersToLabel(r.Mitigation, d.Label) ||
		sharedSubjectWords(d.Content, r.Description) >= 2
}

// riskKey is how a risk is named in the graph: its description on one line.
func riskKey(r SnapshotRisk) string { return strings.Join(strings.Fields(r.Description), " ") }

// words splits text into lower-case words of letters and digits.
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// subjectWords are the words of text that say what it is about: four
// letters or more and not a common English word, with a plural "s" removed.
func subjectWords(text string) map[string]bool {
	out := map[string]bool{}
	for _, w := range words(text) {
		if len(w) < 4 || stopWords[w] {
			continue
		}
		out[stem(w)] = true
	}
	return out
}

func stem(w string) string {
	if len(w) > 4 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
		return w[:len(w)-1]
	}
	return w
}

func sharedSubjectWords(a, b string) int {
	wa, wb := subjectWords(a), subjectWords(b)
	n := 0
	for w := range wa {
		if wb[w] {
			n++
		}
	}
	return n
}

// stopWords are words too common to say what a text is about, or to be
// worth a full-text lookup.
var stopWords = setOf(`a about above after again against all also am an and any are as at be because been
before being below between both but by can could did do does doing done down during each even every few
for from further had has have having he her here hers him his how i if in into is it its itself just let
lets like made make many may me might more most much must my need needs no nor not now of off on once only
or other our ours out over own per same shall she should so some such than that the their theirs them then
there these they this those through to too under until up upon us use used uses using very via was we well
were what when where which while who whom why will with within without would yes yet you your yours
should thing things want wants going get gets got keep okay ok sure really maybe think`)

func setOf(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// searchTerms picks the words of text worth looking up: no stop words, each
// once, at most max of them (the last ones, since the end of a conversation
// matters most). If every word is a stop word, the stop words are used.
func searchTerms(text string, max int) []string {
	all := words(text)
	var terms []string
	seen := map[string]bool{}
	for i := len(all) - 1; i >= 0 && len(terms) < max; i-- {
		w := all[i]
		if stopWords[w] || seen[w] || len([]rune(w)) > 64 {
			continue
		}
		seen[w] = true
		terms = append(terms, w)
	}
	if len(terms) == 0 {
		for i := len(all) - 1; i >= 0 && len(terms) < max; i-- {
			if w := all[i]; !seen[w] && len([]rune(w)) <= 64 {
				seen[w] = true
				terms = append(terms, w)
			}
		}
	}
	// Back to the order they were written in.
	for i, j := 0, len(terms)-1; i < j; i, j = i+1, j-1 {
		terms[i], terms[j] = terms[j], terms[i]
	}
	return terms
}

// ftsQuery builds an FTS5 query from free text: each term quoted (so no
// FTS5 syntax from the text survives), all required, or any of them when
// anyTerm. Returns "" if text has no word.
func ftsQuery(text string, anyTerm bool, max int) string {
	terms := searchTerms(text, max)
	for i, t := range terms {
		terms[i] = `"` + t + `"`
	}
	if anyTerm {
		return strings.Join(terms, " OR ")
	}
	return strings.Join(terms, " ")
}

// Snippet markers: control characters, which no stored text contains
// (checkText refuses them), so splitting on them is exact.
const (
	snippetOpen  = "\x02"
	snippetClose = "\x03"
)

// parseSnippet splits an FTS5 snippet made with the markers above.
func parseSnippet(s string) []SnippetPart {
	var parts []SnippetPart
	for s != "" {
		i := strings.Index(s, snippetOpen)
		if i < 0 {
			parts = append(parts, SnippetPart{Text: s})
			break
		}
		if i > 0 {
			parts = append(parts, SnippetPart{Text: s[:i]})
		}
		s = s[i+len(snippetOpen):]
		j := strings.Index(s, snippetClose)
		if j < 0 {
			parts = append(parts, SnippetPart{Text: s, Match: true})
			break
		}
		parts = append(parts, SnippetPart{Text: s[:j], Match: true})
		s = s[j+len(snippetClose):]
	}
	return parts
}
