package offline

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/baton-dev/baton/agent"
)

// sentence is one sentence of a message, with where it sits.
type sentence struct {
	msg    int        // index of its message
	role   agent.Role // who said it
	raw    string     // markdown as written
	plain  string     // without emphasis and code marks
	lower  string     // plain, lower-cased
	bullet bool       // inside a list item
	label  string     // the item's label ("1", "b") when the list is numbered or lettered
	item   int        // index of its list item in the message, -1 outside lists
	idx    int        // index of the sentence in its message
	para   int        // its paragraph: how many blank lines come before it
	first  bool       // the first sentence of its list item
	// section is the lower-cased label the sentence sits under: a heading,
	// a line of bold text ("**Decided**") or a short line ending with ":"
	// ("Caveats:"), "" outside one.
	section string
	heading bool // the label line itself
}

var (
	bulletRE  = mustPattern(`^\s*(?:[-*+•]|(\d{1,2})[.)]|\(?([a-hA-H])\)|([a-h])\.)\s+`)
	letterRE  = mustPattern(`^(?:\(([a-hA-H])\)|([a-hA-H])\))\s+`)
	romanRE   = mustPattern(`^(?:\*\*)?\((i|ii|iii|iv|v|vi|vii|viii)\)(?:\*\*)?\s+`)
	headingRE = mustPattern(`^\s*#{1,6}\s`)
	emphMarks = strings.NewReplacer("**", "", "__", "", "`", "")
)

// romanLetter maps the roman numerals that label options to the letters
// that label them in the same place.
var romanLetter = map[string]string{"i": "a", "ii": "b", "iii": "c", "iv": "d", "v": "e", "vi": "f", "vii": "g", "viii": "h"}

// romanPickRE is a roman numeral a reply picks an option by: "(ii).",
// "ii. run it from the loop", "iii". A lone "i" is the pronoun unless
// in parentheses.
var romanPickRE = mustPattern(`(^|[\s,;:(])(?:\((i|ii|iii|iv|v|vi|vii|viii)\)|(ii|iii|iv|vi|vii|viii)\b)`)

// romanPicks rewrites the roman numerals a reply picks by into the letters
// of the options they name, when the message before offered options so
// labelled: "(ii). Not async" reads "(b). Not async".
func romanPicks(msgs []agent.TranscriptMessage) []agent.TranscriptMessage {
	var out []agent.TranscriptMessage
	offered := false
	for i, m := range msgs {
		switch {
		case m.Role == agent.RoleAssistant:
			offered = strings.Contains(m.Content, "(i") && romanOfferRE.MatchString(m.Content)
		case offered && romanPickRE.MatchString(m.Content):
			if out == nil {
				out = slices.Clone(msgs)
			}
			out[i].Content = romanPickRE.ReplaceAllStringFunc(m.Content, func(s string) string {
				sub := romanPickRE.FindStringSubmatch(s)
				if sub[2] != "" {
					return sub[1] + "(" + romanLetter[sub[2]] + ")"
				}
				return sub[1] + romanLetter[sub[3]]
			})
		}
	}
	if out == nil {
		return msgs
	}
	return out
}

// romanOfferRE finds a list item labelled with a roman numeral.
var romanOfferRE = mustPattern(`(?m)^\s*(?:[-*+•]\s+)?(?:\*\*)?\((?:i|ii|iii|iv)\)`)

// withoutEmphasis returns s without the marks of emphasis and code: "**",
// "__" and "`". Text with none comes back as it is, without a copy.
func withoutEmphasis(s string) string {
	if !strings.ContainsAny(s, "*_`") {
		return s
	}
	return emphMarks.Replace(s)
}

// splitMessage splits a message into sentences. Fenced code blocks and
// quoted lines (pasted material: logs, tickets) are left out: they are text
// someone pasted, not what the people in the conversation said.
func splitMessage(i int, m agent.TranscriptMessage) []sentence {
	var out []sentence
	inFence := false
	item := -1
	section, sticky := "", false
	// A paragraph that opens with a name in bold ("**SaaS** — LaunchDarkly,
	// Statsig") is an item when the message has two or more of them; the
	// list right under it (its pros and cons) belongs to it.
	boldItems := strings.Count(m.Content, "\n**") >= 2 && countBoldLeads(m.Content) >= 2
	boldItem, blank := -1, false
	para := 0 // blank lines seen: the paragraph a line belongs to
	// indent is how far the current top-level list item is indented, -1
	// outside a list; parent is that item.
	indent, parent, parentLabel := -1, -1, ""
	for line := range strings.SplitSeq(m.Content, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inFence = !inFence
			continue
		}
		if t == "" {
			blank = true
			para++
		}
		if inFence || t == "" || strings.HasPrefix(t, ">") {
			continue
		}
		under := boldItem >= 0 && !blank
		blank = false
		var head []string // a heading or label line naming a lettered or numbered option
		if t[0] == '#' && headingRE.MatchString(t) {
			if head = optionHeadRE.FindStringSubmatch(strings.TrimSpace(withoutEmphasis(strings.TrimLeft(t, "# ")))); head == nil {
				section, sticky = sectionLabel(t), true
				boldItem, indent = -1, -1 // a bullet under a new heading starts afresh
				continue
			}
		}
		var g []string // the bullet and its label
		if mayBullet(t[0]) {
			switch g = bulletRE.FindStringSubmatch(t); {
			case g == nil || g[3] == "":
			case m.Role == agent.RoleAssistant:
				// "a. Exact order number": a lettered option, as "a)"
				// is. A user's "a. keep FULL" answers with a letter.
				g[2] = g[3]
			default:
				g = nil
			}
		}
		isBullet := g != nil
		sub := isBullet && indent >= 0 && indentOf(line) > indent && g[1] == "" && g[2] == "" && !letterRE.MatchString(t[len(g[0]):])
		lead := !isBullet && boldItems && boldLeadRE.MatchString(t)
		if !isBullet && !lead && head == nil {
			if _, ok := labelLine(t); ok {
				head = optionHeadRE.FindStringSubmatch(strings.TrimSpace(strings.Trim(withoutEmphasis(t), ": ")))
			}
		}
		lead = lead || head != nil
		if !isBullet && !lead {
			boldItem = -1
			indent = -1
		}
		if !isBullet && !lead {
			l, ok := labelLine(t)
			switch {
			case ok:
				section, sticky = l, false
			case !sticky:
				section = ""
			}
		}
		s := sentence{msg: i, role: m.Role, item: -1, section: section, para: para}
		s.heading = !isBullet && section != "" && !sticky && sectionLabel(t) == section
		cont := false // a sentence of the item above, not a new one
		switch {
		case lead:
			item++
			s.bullet, s.item = true, item
			boldItem = item
			if head != nil {
				// "**A. Convert everything at once**" over the bullets
				// that describe it: option A, named by the rest.
				s.label, t = lowerASCII(head[1]), head[2]
			} else if l := boldLabelRE.FindStringSubmatch(t); l != nil {
				// "**A. Redis** with a 5 minute TTL": option A, "Redis".
				s.label, t = lowerASCII(l[1]), "**"+t[len(l[0]):]
			}
		case isBullet && under && g[1] == "" && g[2] == "" && !letterRE.MatchString(t[len(g[0]):]):
			// A numbered or lettered list under a bold item ("**Processing**:"
			// over "(a) …", "(b) …") offers its own items, taken below.
			s.bullet, s.item = true, boldItem
			t = t[len(g[0]):]
			cont = true
		case sub:
			// "1. **Merchant key**" with "   - the merchant passes …"
			// under it: an unlabelled item indented under another says
			// what that one is, as its following sentences.
			s.bullet, s.item, s.label = true, parent, parentLabel
			t = t[len(g[0]):]
			cont = true
		case isBullet && g != nil:
			boldItem = -1
			item++
			indent, parent = indentOf(line), item
			s.bullet, s.item = true, item
			s.label = g[1] + lowerASCII(g[2])
			t = t[len(g[0]):]
			if l := letterRE.FindStringSubmatch(t); l != nil {
				s.label = lowerASCII(l[1] + l[2])
				t = t[len(l[0]):]
			} else if l := romanRE.FindStringSubmatch(t); l != nil && m.Role == agent.RoleAssistant {
				// "- (ii) A small handler class", "- **(ii)** …": roman
				// numerals label options as letters do; (ii) is (b).
				s.label = romanLetter[l[1]]
				t = t[len(l[0]):]
			} else if l := letterRE.FindStringSubmatch(strings.TrimPrefix(t, "**")); l != nil && strings.HasPrefix(t, "**") {
				// "- **(a) Hand-written files** under sig/": the label
				// inside the bold name.
				s.label = lowerASCII(l[1] + l[2])
				t = "**" + t[2+len(l[0]):]
			}
			parentLabel = s.label
		}
		for k, part := range splitSentences(t) {
			c := s
			c.first = k == 0 && !cont
			c.raw = part
			c.plain = strings.TrimSpace(withoutEmphasis(part))
			c.lower = lowerASCII(c.plain)
			c.idx = len(out)
			if c.plain != "" {
				out = append(out, c)
			}
		}
	}
	return out
}

// indentOf returns how many spaces or tabs open line.
func indentOf(line string) int {
	return len(line) - len(strings.TrimLeft(line, " \t"))
}

// boldLabelRE opens a line whose bold name starts with an option's letter
// or number: "**A. Redis**", "**Option 2: LRU**".
var boldLabelRE = mustPattern(`^\*\*(?:[Oo]ption\s+)?([A-Ha-h]|\d{1,2})[.):]\s+`)

// optionHeadRE is the text of a label line that names an option by a
// letter or number: "A. Convert everything at once", "Option 2: Redis".
var optionHeadRE = mustPattern(`^(?:[Oo]ption\s+)?([A-Ha-h]|\d{1,2})[.):]\s+(\S.*)$`)

// mayBullet reports whether a line opening with byte b may be a list
// item, as bulletRE reads one: "-", "*", "+", "•", a number or a letter.
func mayBullet(b byte) bool {
	switch {
	case b == '-', b == '*', b == '+', b == '(', b == 0xE2, b >= '0' && b <= '9', b >= 'a' && b <= 'h', b >= 'A' && b <= 'H':
		return true
	}
	return false
}

// boldLeadRE is a line that opens with a name in bold and goes on.
var boldLeadRE = mustPattern(`^\*\*[^*]{1,60}\*\*[\s:.—–-]*\S`)

// countBoldLeads counts the lines of s that open with a name in bold and
// go on.
func countBoldLeads(s string) int {
	n := 0
	for line := range strings.SplitSeq(s, "\n") {
		if boldLeadRE.MatchString(strings.TrimSpace(line)) {
			n++
		}
	}
	return n
}

// labelLine reports whether a line only names what follows it: bold text
// alone ("**Decided**") or a short phrase ending with a colon ("Known
// trade-offs:"), and returns the label lower-cased.
func labelLine(t string) (string, bool) {
	bold := strings.HasPrefix(t, "**") && strings.HasSuffix(t, "**") && strings.Count(t, "**") == 2 && len(t) > 4
	colon := strings.HasSuffix(t, ":") && words(t) <= 6
	if !bold && !colon {
		return "", false
	}
	return sectionLabel(t), true
}

// sectionLabel returns the words of a heading or label line, lower-cased.
func sectionLabel(t string) string {
	t = strings.TrimLeft(t, "# ")
	return lowerASCII(strings.TrimSpace(strings.Trim(withoutEmphasis(t), ": ")))
}

// abbreviations end with a period without ending a sentence.
var abbreviations = map[string]bool{"e.g": true, "i.e": true, "etc": true, "vs": true, "approx": true, "cf": true}

// splitSentences splits a line at ".", "!" or "?" followed by a space,
// never inside a code span or after a common abbreviation.
func splitSentences(line string) []string {
	var out []string
	code := false
	start := 0
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == '`' {
			code = !code
			continue
		}
		if code || (c != '.' && c != '!' && c != '?') {
			continue
		}
		if i+1 < len(line) && line[i+1] != ' ' {
			continue
		}
		w := strings.TrimLeft(lastWord(line[start:i]), "([{\"'")
		if c == '.' && abbreviations[lowerASCII(w)] {
			continue
		}
		if c == '.' && i >= 3 && line[i-1] == '.' && line[i-2] == '.' && line[i-3] == ' ' {
			continue // "INSERT ... SELECT": an ellipsis standing alone, inside the sentence
		}
		if s := strings.TrimSpace(line[start : i+1]); s != "" {
			out = append(out, s)
		}
		start = i + 1
	}
	if s := strings.TrimSpace(line[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// lastWord returns the last space-separated word of s.
func lastWord(s string) string {
	if i := strings.LastIndexByte(s, ' '); i >= 0 {
		return s[i+1:]
	}
	return s
}

// stopWords are words too common to say what a sentence is about.
//
// The extractor keeps its own word rules apart from agent's tokenizer
// (agent.Terms, used by memory capture and search) on purpose: it compares
// sentences with each other, so it reads file paths as one token
// ("src/auth/jwt.go"), folds -ing/-ed/-ly as well as plurals, and works on
// bytes to stay within its time budget (50 messages in well under 5 ms).
// Memory search needs neither and must agree with the full-text index.
var stopWords = wordSet(`a an the to of in on for and or with by at from as is are be been was were
		we our us i you it its this that these those will would should could can use using used let lets let's
		go going ok okay yes so then just also into via all any each per do does did not no but if when which
		what who how than me my your they them their there here have has had get gets got make makes one two
		only now still some more most very much like about out up down over under after before again too
		sure fine good great yeah yep agreed think thinking want need needs way thing things it's that's i'd
		i'll we'll don't dont can't won't isn't doesn't what's`)

// wordSet makes a set of the space-separated words of s.
func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for w := range strings.FieldsSeq(s) {
		m[w] = true
	}
	return m
}

// tokens returns the stemmed content words of lower-cased text. Words are
// runs of letters, digits and _./-', as the evaluation reads them.
func tokens(lower string) []string {
	out := make([]string, 0, wordsHint(lower))
	eachToken(lower, func(w string) { out = append(out, w) })
	return out
}

// eachToken calls yield with each stemmed content word of lower-cased
// text, in order (see tokens).
func eachToken(lower string, yield func(string)) {
	start := -1
	for i := 0; i <= len(lower); i++ {
		inWord := i < len(lower) && isTokenByte(lower[i])
		if inWord && start < 0 {
			start = i
		}
		if !inWord && start >= 0 {
			if w := strings.Trim(lower[start:i], "./-'"); w != "" && !stopWords[w] {
				yield(stem(w))
			}
			start = -1
		}
	}
}

// wordsHint guesses how many tokens lower-cased text holds, to size what
// holds them: about every other word is a stop word.
func wordsHint(lower string) int {
	return strings.Count(lower, " ")/2 + 1
}

// isTokenByte reports whether b belongs to a token.
func isTokenByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '_' || b == '.' || b == '/' || b == '\'' || b == '-'
}

// stem removes one common English suffix.
func stem(w string) string {
	for _, suf := range []string{"ing", "ed", "es", "s", "ly"} {
		if len(w) > len(suf)+2 && strings.HasSuffix(w, suf) {
			return w[:len(w)-len(suf)]
		}
	}
	return w
}

// tokenSet is a set of stemmed content words.
type tokenSet map[string]struct{}

func newTokenSet(lower string) tokenSet {
	s := make(tokenSet, wordsHint(lower))
	eachToken(lower, func(w string) { s[w] = struct{}{} })
	return s
}

// similarity is the token F1 of two sets: 1 for the same words, 0 for none shared.
func similarity(a, b tokenSet) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	common := 0
	for t := range a {
		if _, ok := b[t]; ok {
			common++
		}
	}
	if common == 0 {
		return 0
	}
	p, r := float64(common)/float64(len(a)), float64(common)/float64(len(b))
	return 2 * p * r / (p + r)
}

// looseOverlap counts words of a found in b, where words of four letters or
// more also match by prefix ("virtualize" ~ "virtualization") and a word
// matches a part of a hyphenated one ("layout" ~ "table-layout").
func looseOverlap(a, b tokenSet) int {
	n := 0
	for t := range a {
		if _, ok := b[t]; ok {
			n++
			continue
		}
		for u := range b {
			if len(t) >= 4 && len(u) >= 4 && (strings.HasPrefix(u, t) || strings.HasPrefix(t, u)) || hasPart(u, t) || hasPart(t, u) {
				n++
				break
			}
		}
	}
	return n
}

// hasPart reports whether the hyphenated word or path u has w as one of
// its parts ("layout" in "table-layout", "search" in "v1/search"), w being
// three characters or more and not a number.
func hasPart(u, w string) bool {
	if len(w) < 3 || len(u) <= len(w) || !strings.ContainsAny(u, "-/") || strings.IndexFunc(w, unicode.IsLetter) < 0 {
		return false
	}
	for p := range strings.FieldsFuncSeq(u, func(r rune) bool { return r == '-' || r == '/' }) {
		if p == w || stem(p) == w {
			return true
		}
	}
	return false
}

// words counts the words of s, as strings.Fields splits them, without
// building the slice.
func words(s string) int {
	n := 0
	inWord := false
	for _, r := range s {
		space := r < utf8.RuneSelf && asciiSpace[r] || r >= utf8.RuneSelf && unicode.IsSpace(r)
		if !space && !inWord {
			n++
		}
		inWord = !space
	}
	return n
}

// asciiSpace are the ASCII bytes strings.Fields splits at.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// unlead returns s without what re, a pattern anchored at the start of the
// text, matches there. It runs re once; ReplaceAllString would run it again
// after the match only to find nothing.
// unleadAck returns s without its acknowledgement: unlead(leadRE, s)
// ("ok, so use HS256" → "use HS256"), without running the pattern on the
// many clauses whose first word opens none.
func unleadAck(s string) string {
	if w := lowerASCII(leadWord(s)); !ackFirstWords[w] && !strings.HasPrefix(w, "hmm") {
		return s
	}
	return unlead(leadRE, s)
}

// leadWord returns the ASCII word s opens with ("let's" in "let's go"),
// or "" when s opens with anything else.
func leadWord(s string) string {
	end := 0
	for end < len(s) && s[end] < 0x80 && isWordByte(s[end]) {
		end++
	}
	return s[:end]
}

// ackFirstWords are the words an acknowledgement of leadRE can open with.
var ackFirstWords = wordSet(`ok okay yes yeah yep sure fine great good fair alright so and also then ugh oh right agreed cool perfect lol actually well but just please now anyway got sounds thanks for i`)

func unlead(re *pattern, s string) string {
	if loc := re.FindStringIndex(s); loc != nil {
		return s[loc[1]:]
	}
	return s
}

// firstWords cuts s to its first n words.
func firstWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) <= n {
		return s
	}
	return strings.Join(f[:n], " ") + "…"
}

// tidy trims punctuation and spaces a clause is left with after cutting,
// and capitalises it.
func tidy(s string) string {
	s = strings.TrimFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(",;:—–-", r)
	})
	s = strings.TrimRight(s, ".!")
	if s == "" {
		return s
	}
	if first, _, _ := strings.Cut(s, " "); codeLike(first) {
		return s // "app/views/reports.py …", "createLoaders is …": as written
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// codeLike reports whether word is a path or a name from code ("app/x.py",
// "patched():", "userById", "max_retries"), whose case is part of it.
func codeLike(word string) bool {
	word = strings.TrimRight(word, ",.;:!?") // "ok." is a word, "x.py" a file
	if strings.ContainsAny(word, "/._()[]{}=<>@$#`") {
		return true
	}
	for i := 1; i < len(word); i++ {
		if c := word[i]; c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			return true
		}
	}
	return false
}

// lowerASCII lower-cases the ASCII letters of s and leaves every other
// byte as it is. The rules search lower-cased text and cut the original at
// the offsets they find, so the two must have the same length: Unicode
// lower-casing changes it for some letters ("İ" shrinks, "Ⱥ" grows).
// hasPrefixFold reports whether s begins with prefix, ASCII letters of
// either case alike: strings.HasPrefix(lowerASCII(s), lowerASCII(prefix))
// without lowering either.
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if lowerByte(s[i]) != lowerByte(prefix[i]) {
			return false
		}
	}
	return true
}

func lowerByte(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func lowerASCII(s string) string {
	i := 0
	for i < len(s) && (s[i] < 'A' || s[i] > 'Z') {
		i++
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for ; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// dropParens returns s without its parenthetical remarks and the spaces
// before them: " (which is slow)", " ()". A lone label ("with (a) or
// (b)", "(2)") points at an option and stays, and so does a bracket with
// no space before it ("f(x)") or one that holds another. It does what
// `\s+\((?:[^()]{2,}|[^()a-h0-9]|)\)` replaced by "" does, in one pass:
// that regexp, tried at every space of every sentence, was the costliest
// of the rules.
func dropParens(s string) string {
	k := strings.IndexByte(s, '(')
	if k < 0 {
		return s
	}
	var b strings.Builder
	last := 0 // s[last:] is not written yet
	for k >= 0 {
		start := k // the spaces before the bracket
		for start > last && isSpaceByte(s[start-1]) {
			start--
		}
		next := k + 1
		if start < k {
			if c := strings.IndexAny(s[k+1:], "()"); c >= 0 && s[k+1+c] == ')' {
				// A label is one byte, a-h or a digit.
				inner := s[k+1 : k+1+c]
				if len(inner) != 1 || !(inner[0] >= 'a' && inner[0] <= 'h' || inner[0] >= '0' && inner[0] <= '9') {
					b.WriteString(s[last:start])
					last = k + 2 + c
					next = last
				}
			}
		}
		if i := strings.IndexByte(s[next:], '('); i >= 0 {
			k = next + i
		} else {
			k = -1
		}
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// isSpaceByte reports whether c is a space as regexp's \s reads it.
func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}
