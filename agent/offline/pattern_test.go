package offline

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
)

// TestPatternLiterals pins what the analysis reads from the shapes the
// rules use: the strings every match holds, or begins with.
func TestPatternLiterals(t *testing.T) {
	for _, tc := range []struct {
		expr   string
		want   []string
		prefix bool
	}{
		{`\b(?:stale|bugs?)\b`, []string{"stale", "bug"}, false},
		{`\b(?:later|follow-?up) (?:pr|ticket)`, []string{"later pr", "later ticket", "followup pr", "followup ticket", "follow-up pr", "follow-up ticket"}, false},
		{`^(no|nope|nah)\b`, []string{"no", "nah"}, true},
		{`^(?:let'?s|we'll)\s+go`, []string{"let's", "lets", "we'll"}, true},
		{`;\s+|\s+[—–]\s+|,\s+but\s+`, []string{";", "—", "–", "but"}, false},
		{`(?:^|[—:,] )(?:and |but )?(no|not)\s+x`, []string{"no"}, false},
		{`\bgo with (\d)\b|option (\d)`, []string{"go with ", "option "}, false},
		{`leave \S+ alone`, []string{"leave "}, false},
		{`(?:ab)+c`, []string{"ab"}, false},
		{`x{2,3}y`, []string{"x"}, false},
		// Nothing to read: case folding, a wide class, a match of nothing.
		{`(?i)^my worry`, nil, false},
		{`[a-z]+\d`, nil, false},
		{`a*`, nil, false},
		{`^(?:so )?\w+`, nil, false},
	} {
		p := newPattern(tc.expr)
		slices.Sort(p.lits.all)
		slices.Sort(tc.want)
		if !slices.Equal(p.lits.all, tc.want) || p.lits.prefix != tc.prefix {
			t.Errorf("%s: literals %q (prefix %v), want %q (prefix %v)", tc.expr, p.lits.all, p.lits.prefix, tc.want, tc.prefix)
		}
	}
}

// TestPatternNeverHidesAMatch runs every pattern of the rules on the
// sentences, clauses and messages of real transcripts: whenever the
// regexp matches, the check must have let the text through. Checking
// whether the output of the rules stayed the same would only cover the
// patterns the transcripts happen to reach.
func TestPatternNeverHidesAMatch(t *testing.T) {
	var texts []string
	for _, msgs := range evalTranscripts(t, map[bool]int{false: 36, true: 90}[testing.Short()], 0) {
		tr := newTranscript(msgs)
		for j, m := range msgs {
			texts = append(texts, m.Content, lowerASCII(m.Content))
			for _, s := range tr.sents[j] {
				texts = append(texts, s.raw, s.plain, s.lower)
				for _, c := range userClauses(s.plain) {
					texts = append(texts, c, lowerASCII(c))
				}
			}
		}
	}
	checked, matched, split := 0, 0, 0
	for _, p := range patterns {
		for _, s := range texts {
			if p.Regexp.MatchString(s) {
				matched++
				if !p.may(s) {
					t.Fatalf("%s matches %q, but its check %q (prefix %v) turned it away", p, s, p.lits.all, p.lits.prefix)
				}
			}
			checked++
		}
		if p.parts != nil {
			split++
			for _, s := range texts {
				if got, want := p.MatchString(s), p.Regexp.MatchString(s); got != want {
					t.Fatalf("%s in parts: MatchString(%q) = %v, want %v", p, s, got, want)
				}
				if got, want := p.FindStringIndex(s), p.Regexp.FindStringIndex(s); !slices.Equal(got, want) {
					t.Fatalf("%s in parts: FindStringIndex(%q) = %v, want %v", p, s, got, want)
				}
			}
		}
	}
	if split == 0 {
		t.Fatal("no pattern of the rules was split into parts: the parts were never tried")
	}
	texts = append(texts, "call System.cmd(x)", "patron.lock! now", "x-.json: true", "a..b: 'y'", "use `experiments.css: false`")
	for _, k := range notPathREs {
		for _, s := range texts {
			if k.may != nil && k.re.Regexp.MatchString(s) && !k.may(s) {
				t.Fatalf("%s matches %q, but its quick test turned it away", k.re, s)
			}
		}
	}
	if matched == 0 {
		t.Fatal("no pattern matched anything: the check was never tried")
	}
	t.Logf("%d patterns on %d texts: %d matches, none turned away", len(patterns), len(texts), matched)
}

// A pattern too large for regexp's backtracker matches part by part, and
// finds what the whole would: the leftmost match, and of the alternatives
// matching there the first.
func TestPatternParts(t *testing.T) {
	var words []string // no two alike at the start, so that the parser cannot factor them
	for i := range 120 {
		words = append(words, fmt.Sprintf("%c%cord%03d", 'a'+i%26, 'a'+i/26, i))
	}
	p := newPattern(`\b(?:` + strings.Join(words, "|") + `|wo|aaord00|aaord000(?: x)?)\b`)
	if len(p.parts) < 100 {
		t.Fatalf("%d parts, want one per alternative", len(p.parts))
	}
	small := newPattern(`\b(?:a|b)\b`)
	if small.parts != nil {
		t.Fatalf("a small pattern was split: %d parts", len(small.parts))
	}
	// A part of the concatenation with a choice of its own could make the
	// first part that matches end elsewhere than the whole: no parts.
	if q := newPattern(`\b(?:` + strings.Join(words, "|") + `)\b(?:s)?`); q.parts != nil {
		t.Fatalf("split beside a choice: %d parts", len(q.parts))
	}
	for _, s := range []string{"", "nothing here", "a peord119 and hbord007", "wo aaord000s", "aaord00", "saaord000", "aaord000x bcord027", "aaord000 x"} {
		if got, want := p.MatchString(s), p.Regexp.MatchString(s); got != want {
			t.Errorf("MatchString(%q) = %v, want %v", s, got, want)
		}
		if got, want := p.FindStringIndex(s), p.Regexp.FindStringIndex(s); !slices.Equal(got, want) {
			t.Errorf("FindStringIndex(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestPatternRandom builds random regexps from the shapes the analysis
// reads and random texts over a small alphabet: whenever a regexp matches,
// its check must agree, whatever it made of the regexp.
func TestPatternRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	atoms := []string{"a", "b", "ab", "ba", "c", "[ab]", "[a-c]", `\b`, "^", "$", " ", `\s`, ".", "é", "(?i:a)"}
	var gen func(depth int) string
	gen = func(depth int) string {
		if depth == 0 || rng.IntN(3) == 0 {
			return atoms[rng.IntN(len(atoms))]
		}
		switch rng.IntN(7) {
		case 0:
			return gen(depth-1) + gen(depth-1)
		case 1:
			return "(?:" + gen(depth-1) + "|" + gen(depth-1) + ")"
		case 2:
			return "(?:" + gen(depth-1) + ")?"
		case 3:
			return "(?:" + gen(depth-1) + ")+"
		case 4:
			return "(?:" + gen(depth-1) + ")*"
		case 5:
			return "(?:" + gen(depth-1) + "){" + []string{"0,1", "0,2", "0,", "1", "2", "1,3", "2,"}[rng.IntN(7)] + "}"
		}
		return "(" + gen(depth-1) + gen(depth-1) + ")"
	}
	alphabet := []string{"a", "b", "c", " ", "A", "é", "x"}
	tried, matched := 0, 0
	for range 3000 {
		expr := gen(4)
		if _, err := syntax.Parse(expr, syntax.Perl); err != nil {
			continue
		}
		p := newPattern(expr)
		for range 60 {
			var b strings.Builder
			for range rng.IntN(9) {
				b.WriteString(alphabet[rng.IntN(len(alphabet))])
			}
			s := b.String()
			tried++
			if p.Regexp.MatchString(s) {
				matched++
				if !p.may(s) {
					t.Fatalf("%s matches %q, but its check %q (prefix %v) turned it away", expr, s, p.lits.all, p.lits.prefix)
				}
			}
		}
	}
	if matched < tried/10 {
		t.Fatalf("only %d of %d texts matched: too few to test the check", matched, tried)
	}
}

// TestPatternMethodsAgree checks that each method the check guards gives
// what regexp gives, on a text the check turns away and on one it lets in.
func TestPatternMethodsAgree(t *testing.T) {
	p := newPattern(`,\s+(but)\s+`)
	re := p.Regexp
	for _, s := range []string{"no comma here", "yes, but no", ""} {
		if got, want := p.MatchString(s), re.MatchString(s); got != want {
			t.Errorf("MatchString(%q) = %v, want %v", s, got, want)
		}
		if got, want := p.FindString(s), re.FindString(s); got != want {
			t.Errorf("FindString(%q) = %q, want %q", s, got, want)
		}
		if got, want := p.FindStringIndex(s), re.FindStringIndex(s); !slices.Equal(got, want) {
			t.Errorf("FindStringIndex(%q) = %v, want %v", s, got, want)
		}
		if got, want := p.FindStringSubmatch(s), re.FindStringSubmatch(s); !slices.Equal(got, want) {
			t.Errorf("FindStringSubmatch(%q) = %q, want %q", s, got, want)
		}
		if got, want := p.FindStringSubmatchIndex(s), re.FindStringSubmatchIndex(s); !slices.Equal(got, want) {
			t.Errorf("FindStringSubmatchIndex(%q) = %v, want %v", s, got, want)
		}
		if got, want := len(p.FindAllString(s, -1)), len(re.FindAllString(s, -1)); got != want {
			t.Errorf("FindAllString(%q): %d matches, want %d", s, got, want)
		}
		if got, want := len(p.FindAllStringIndex(s, -1)), len(re.FindAllStringIndex(s, -1)); got != want {
			t.Errorf("FindAllStringIndex(%q): %d matches, want %d", s, got, want)
		}
		if got, want := len(p.FindAllStringSubmatch(s, -1)), len(re.FindAllStringSubmatch(s, -1)); got != want {
			t.Errorf("FindAllStringSubmatch(%q): %d matches, want %d", s, got, want)
		}
		if got, want := len(p.FindAllStringSubmatchIndex(s, -1)), len(re.FindAllStringSubmatchIndex(s, -1)); got != want {
			t.Errorf("FindAllStringSubmatchIndex(%q): %d matches, want %d", s, got, want)
		}
		if got, want := p.ReplaceAllString(s, "$1"), re.ReplaceAllString(s, "$1"); got != want {
			t.Errorf("ReplaceAllString(%q) = %q, want %q", s, got, want)
		}
		if got, want := p.ReplaceAllStringFunc(s, strings.ToUpper), re.ReplaceAllStringFunc(s, strings.ToUpper); got != want {
			t.Errorf("ReplaceAllStringFunc(%q) = %q, want %q", s, got, want)
		}
		for _, n := range []int{-1, 0, 1} {
			if got, want := p.Split(s, n), re.Split(s, n); !slices.Equal(got, want) || (got == nil) != (want == nil) {
				t.Errorf("Split(%q, %d) = %q, want %q", s, n, got, want)
			}
		}
	}
}

// dropParens does what the regexp it replaces did, on the sentences of
// real transcripts and on random texts of brackets, spaces and labels.
func TestDropParensIsItsRegexp(t *testing.T) {
	re := regexp.MustCompile(`\s+\((?:[^()]{2,}|[^()a-h0-9]|)\)`)
	texts := []string{"", "plain", "use X (which is slow) now", "with (a) or (b)", "f(x) (2) ( ) ()", " (ab)(cd) (é) (z)", "a (b(c)d) e", "x \t(ok)\n(fine)"}
	for _, msgs := range evalTranscripts(t, 1, 60) {
		for _, m := range msgs {
			texts = append(texts, m.Content)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{" ", "  ", "\t", "\n", "(", ")", "a", "h", "z", "9", "é", "ab", "x"}
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		texts = append(texts, b.String())
	}
	for _, s := range texts {
		if got, want := dropParens(s), re.ReplaceAllString(s, ""); got != want {
			t.Fatalf("dropParens(%q) = %q, want %q", s, got, want)
		}
	}
}
