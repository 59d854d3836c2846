package offline

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
)

// pattern is a regexp that first checks for the literal text every match
// must hold. The rules try most of their regexps on sentences they do
// not match, and Go's regexp engine has no such check of its own: an
// alternation of a hundred phrases steps through every phrase at every
// byte. A look for the phrases' words costs a fraction of that.
//
// Only the methods the rules call are checked first; the others, promoted
// from the embedded Regexp, run it as is.
type pattern struct {
	*regexp.Regexp
	lits litSet
	// parts are the pattern's alternatives, each a pattern of its own, when
	// the whole is too large for regexp's backtracker: its slower NFA then
	// runs every phrase at every byte, where each part's check turns most
	// texts away and the rest run the backtracker. Only MatchString and
	// FindStringIndex use them.
	parts []*pattern
}

// maxBacktrackProg is the largest program regexp runs on its backtracker
// (regexp's own maxBacktrackProg).
const maxBacktrackProg = 500

// patterns are all the patterns compiled, so that a test can check each
// one's literal text against real sentences.
var patterns []*pattern

// mustPattern compiles expr, like regexp.MustCompile, with its check.
func mustPattern(expr string) *pattern {
	p := newPattern(expr)
	patterns = append(patterns, p)
	return p
}

func newPattern(expr string) *pattern {
	p := &pattern{Regexp: regexp.MustCompile(expr)}
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		panic(err) // unreachable: MustCompile parsed it
	}
	if pre := prefixLits(re); pre != nil {
		p.lits = newLitSet(pre, true)
	} else if need := analyzeLits(re).best(); need != nil {
		p.lits = newLitSet(need, false)
	}
	if prog, err := syntax.Compile(re.Simplify()); err == nil && len(prog.Inst) > maxBacktrackProg {
		for _, alt := range alternatives(re) {
			p.parts = append(p.parts, newPattern(alt.String()))
		}
	}
	return p
}

// alternatives splits re at its widest alternation, at the top or one
// part of a top-level concatenation ("\b(?:a|b|c)\b" gives "\ba\b",
// "\bb\b" and "\bc\b"): a text matches re where one of them matches. Nil
// when re has no such alternation. The other parts of the concatenation
// must leave no choice (literals, anchors, \b), so that the leftmost
// match of the first part that matches there is the one re finds.
func alternatives(re *syntax.Regexp) []*syntax.Regexp {
	unwrap := func(r *syntax.Regexp) *syntax.Regexp {
		for r.Op == syntax.OpCapture {
			r = r.Sub[0]
		}
		return r
	}
	if r := unwrap(re); r.Op == syntax.OpAlternate {
		return r.Sub
	}
	if re.Op != syntax.OpConcat {
		return nil
	}
	at, widest := -1, 1
	for k, sub := range re.Sub {
		if r := unwrap(sub); r.Op == syntax.OpAlternate && len(r.Sub) > widest {
			at, widest = k, len(r.Sub)
		}
	}
	if at < 0 {
		return nil
	}
	for k, sub := range re.Sub {
		switch sub.Op {
		case syntax.OpLiteral, syntax.OpWordBoundary, syntax.OpNoWordBoundary, syntax.OpBeginText, syntax.OpEndText, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpEmptyMatch:
		default:
			if k != at {
				return nil
			}
		}
	}
	var out []*syntax.Regexp
	for _, alt := range unwrap(re.Sub[at]).Sub {
		subs := slices.Clone(re.Sub)
		subs[at] = alt
		out = append(out, &syntax.Regexp{Op: syntax.OpConcat, Flags: re.Flags, Sub: subs})
	}
	return out
}

// may reports whether s can match: false only when it cannot.
func (p *pattern) may(s string) bool { return p.lits.in(s) }

func (p *pattern) MatchString(s string) bool {
	if !p.may(s) {
		return false
	}
	if p.parts == nil {
		return p.Regexp.MatchString(s)
	}
	return slices.ContainsFunc(p.parts, func(part *pattern) bool { return part.MatchString(s) })
}

func (p *pattern) FindString(s string) string {
	if !p.may(s) {
		return ""
	}
	return p.Regexp.FindString(s)
}

// FindStringIndex is regexp's: the leftmost match, and of those starting
// there the first alternative's.
func (p *pattern) FindStringIndex(s string) []int {
	if !p.may(s) {
		return nil
	}
	if p.parts == nil {
		return p.Regexp.FindStringIndex(s)
	}
	var first []int
	for _, part := range p.parts {
		if loc := part.FindStringIndex(s); loc != nil && (first == nil || loc[0] < first[0]) {
			first = loc
		}
	}
	return first
}

func (p *pattern) FindStringSubmatch(s string) []string {
	if !p.may(s) {
		return nil
	}
	return p.Regexp.FindStringSubmatch(s)
}

func (p *pattern) FindStringSubmatchIndex(s string) []int {
	if !p.may(s) {
		return nil
	}
	return p.Regexp.FindStringSubmatchIndex(s)
}

func (p *pattern) FindAllString(s string, n int) []string {
	if !p.may(s) {
		return nil
	}
	return p.Regexp.FindAllString(s, n)
}

func (p *pattern) FindAllStringIndex(s string, n int) [][]int {
	if !p.may(s) {
		return nil
	}
	return p.Regexp.FindAllStringIndex(s, n)
}

func (p *pattern) FindAllStringSubmatch(s string, n int) [][]string {
	if !p.may(s) {
		return nil
	}
	return p.Regexp.FindAllStringSubmatch(s, n)
}

func (p *pattern) FindAllStringSubmatchIndex(s string, n int) [][]int {
	if !p.may(s) {
		return nil
	}
	return p.Regexp.FindAllStringSubmatchIndex(s, n)
}

func (p *pattern) ReplaceAllString(src, repl string) string {
	if !p.may(src) {
		return src
	}
	return p.Regexp.ReplaceAllString(src, repl)
}

func (p *pattern) ReplaceAllStringFunc(src string, repl func(string) string) string {
	if !p.may(src) {
		return src
	}
	return p.Regexp.ReplaceAllStringFunc(src, repl)
}

// Split is regexp's Split: with no match, s whole (nothing when n is 0).
func (p *pattern) Split(s string, n int) []string {
	if !p.may(s) {
		if n == 0 {
			return nil
		}
		return []string{s}
	}
	return p.Regexp.Split(s, n)
}

// maxLits bounds the strings a literal set is built from: past it, the
// cross product of a concatenation grows faster than it narrows.
const maxLits = 64

// lits is what the analysis knows of the text a syntax node matches.
type lits struct {
	exact []string // every string the node matches, when known and few
	known bool     // exact is complete ("" when it can match nothing)
	need  []string // every match holds one of these; nil when none is known
}

// best is the most selective set every match holds one of, nil if none.
func (l lits) best() []string {
	if l.known && !slices.Contains(l.exact, "") && better(l.exact, l.need) {
		return l.exact
	}
	return l.need
}

// better reports whether literal set a narrows more than b: its shortest
// string is longer, or as long with fewer strings. A nil set narrows
// nothing.
func better(a, b []string) bool {
	if a == nil || slices.Contains(a, "") {
		return false
	}
	if b == nil {
		return true
	}
	la, lb := minLen(a), minLen(b)
	return la > lb || la == lb && len(a) < len(b)
}

func minLen(ss []string) int {
	n := -1
	for _, s := range ss {
		if n < 0 || len(s) < n {
			n = len(s)
		}
	}
	return n
}

// cross is every string of a followed by one of b, or false when there
// would be more than maxLits.
func cross(a, b []string) ([]string, bool) {
	if len(a)*len(b) > maxLits {
		return nil, false
	}
	out := make([]string, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			if s := x + y; !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out, true
}

// analyzeLits finds the literal text of a parsed regexp: the strings it
// matches when they are few, and strings one of which every match holds.
// Anything it cannot read (case folding, wide classes, "*") is unknown,
// which only makes the check let more through.
func analyzeLits(re *syntax.Regexp) lits {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 && strings.ToLower(string(re.Rune)) != strings.ToUpper(string(re.Rune)) {
			return lits{}
		}
		return lits{exact: []string{string(re.Rune)}, known: true}
	case syntax.OpCharClass:
		var out []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if len(out) == 4 {
					return lits{}
				}
				out = append(out, string(r))
			}
		}
		return lits{exact: out, known: true}
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText,
		syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return lits{exact: []string{""}, known: true}
	case syntax.OpCapture:
		return analyzeLits(re.Sub[0])
	case syntax.OpQuest:
		return optional(analyzeLits(re.Sub[0]))
	case syntax.OpPlus:
		return lits{need: analyzeLits(re.Sub[0]).best()}
	case syntax.OpRepeat:
		sub := analyzeLits(re.Sub[0])
		switch {
		case re.Min == 0 && re.Max == 1:
			return optional(sub)
		case re.Min == 1 && re.Max == 1:
			return sub
		case re.Min >= 1:
			return lits{need: sub.best()}
		}
		return lits{}
	case syntax.OpConcat:
		return concatLits(re.Sub)
	case syntax.OpAlternate:
		return alternateLits(re.Sub)
	}
	return lits{}
}

// optional is what "x?" matches: x's strings and "".
func optional(sub lits) lits {
	if !sub.known || len(sub.exact) >= maxLits {
		return lits{}
	}
	exact := slices.Clone(sub.exact)
	if !slices.Contains(exact, "") {
		exact = append(exact, "")
	}
	return lits{exact: exact, known: true}
}

// concatLits reads a concatenation: runs of parts with known strings give
// their cross product; the best set of a run or a part is what every
// match holds.
func concatLits(subs []*syntax.Regexp) lits {
	var need []string
	consider := func(set []string) {
		if better(set, need) {
			need = set
		}
	}
	run, known := []string{""}, true
	for _, sub := range subs {
		l := analyzeLits(sub)
		if !l.known {
			consider(run)
			consider(l.need)
			run, known = []string{""}, false
			continue
		}
		if prod, ok := cross(run, l.exact); ok {
			run = prod
			continue
		}
		consider(run)
		run, known = l.exact, false
	}
	consider(run)
	if known {
		return lits{exact: run, known: true, need: need}
	}
	return lits{need: need}
}

// alternateLits reads an alternation: the union of its branches' strings,
// or of what each branch's matches hold.
func alternateLits(subs []*syntax.Regexp) lits {
	var exact, need []string
	known, needed := true, true
	for _, sub := range subs {
		l := analyzeLits(sub)
		if known && l.known && len(exact)+len(l.exact) <= maxLits {
			for _, s := range l.exact {
				if !slices.Contains(exact, s) {
					exact = append(exact, s)
				}
			}
		} else {
			known = false
		}
		if b := l.best(); needed && b != nil {
			for _, s := range b {
				if !slices.Contains(need, s) {
					need = append(need, s)
				}
			}
		} else {
			needed = false
		}
	}
	out := lits{}
	if known {
		out.exact, out.known = exact, true
	}
	if needed {
		out.need = need
	}
	return out
}

// prefixLits is, for a regexp anchored at the start of the text ("^"), the
// strings one of which every match begins with; nil when none is known.
func prefixLits(re *syntax.Regexp) []string {
	if re.Op != syntax.OpConcat || len(re.Sub) < 2 || re.Sub[0].Op != syntax.OpBeginText {
		return nil
	}
	run := []string{""}
	for _, sub := range re.Sub[1:] {
		l := analyzeLits(sub)
		if !l.known {
			break
		}
		prod, ok := cross(run, l.exact)
		if !ok {
			break
		}
		run = prod
	}
	if slices.Contains(run, "") {
		return nil
	}
	return run
}

// litSet finds whether a text holds, or begins with, one of its strings.
// A large set is looked up by the first two bytes of each position.
type litSet struct {
	all    []string
	prefix bool
	one    [256]bool           // the strings of one byte, by byte
	hasOne bool                // the set has a string of one byte
	byPair map[uint16][]string // the longer strings by their first two bytes
	pairs  *[1 << 16 / 64]uint64
}

// pairLookup is the size from which a set is looked up by pairs of bytes
// rather than tried string by string.
const pairLookup = 8

func newLitSet(ss []string, prefix bool) litSet {
	// A string that holds (or begins with) another of the set adds nothing.
	ss = slices.DeleteFunc(slices.Clone(ss), func(s string) bool {
		return slices.ContainsFunc(ss, func(o string) bool {
			return o != s && (strings.HasPrefix(s, o) || !prefix && strings.Contains(s, o))
		})
	})
	l := litSet{all: ss, prefix: prefix}
	if len(ss) < pairLookup {
		return l
	}
	l.byPair, l.pairs = map[uint16][]string{}, new([1 << 16 / 64]uint64)
	for _, s := range ss {
		if len(s) == 1 {
			l.one[s[0]], l.hasOne = true, true
			continue
		}
		key := uint16(s[0])<<8 | uint16(s[1])
		l.byPair[key] = append(l.byPair[key], s)
		l.pairs[key/64] |= 1 << (key % 64)
	}
	return l
}

// in reports whether s holds (or, for a prefix set, begins with) one of
// the strings; true for a set with none, which knows nothing.
func (l *litSet) in(s string) bool {
	if l.all == nil {
		return true
	}
	if l.prefix {
		if len(s) >= 2 && l.pairs != nil && !l.one[s[0]] {
			key := uint16(s[0])<<8 | uint16(s[1])
			if l.pairs[key/64]&(1<<(key%64)) == 0 {
				return false
			}
		}
		for _, x := range l.all {
			if strings.HasPrefix(s, x) {
				return true
			}
		}
		return false
	}
	if l.pairs == nil {
		for _, x := range l.all {
			if strings.Contains(s, x) {
				return true
			}
		}
		return false
	}
	if l.hasOne {
		for i := 0; i < len(s); i++ {
			if l.one[s[i]] {
				return true
			}
		}
	}
	for i := 0; i+1 < len(s); i++ {
		key := uint16(s[i])<<8 | uint16(s[i+1])
		if l.pairs[key/64]&(1<<(key%64)) == 0 {
			continue
		}
		for _, x := range l.byPair[key] {
			if strings.HasPrefix(s[i:], x) {
				return true
			}
		}
	}
	return false
}
