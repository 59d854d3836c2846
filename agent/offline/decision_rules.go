package offline

import (
	"strings"
	"unicode"

	"github.com/baton-dev/baton/agent"
)

// Patterns of the assistant-side decision rules. Each matches lower-cased
// plain text.
var (
	// ackRE opens an assistant reply that takes the user's answer on board
	// ("OK —", "Agreed.", "Got it:", "Will do,").
	ackRE = mustPattern(`^(?:(?:ok|okay|agreed|got it|fine|good call|good catch|great|perfect|right|sure|yes|yep|will do|done|noted|understood|updated|makes sense|sounds good|that's the right call|good)\b[\s,.!:—–-]*)+`)
	// itIsCues are the "X it is" of a reply that confirms a choice.
	itIsCues = cues(`it_is it's_settled stay stays then`)
	// hedgeRE marks a statement that is not settled: a condition, an offer,
	// an open option; hedgeCues the same anywhere in it.
	hedgeRE   = mustPattern(`^(?:if|unless|maybe|perhaps|either|or|alternatively|some teams|you could|you can|one option|another option|we could)\b`)
	hedgeCues = cues(`or_not want_that do_you would_you should_we should_i`)
	// pronounLeadRE opens an opinion rather than the thing itself.
	pronounLeadRE = mustPattern(`^(?:i'd|i would|i'll|we'll|i will|we will|you'll want to|you'd|let's)\s+(?:just\s+|also\s+)?`)
	// controlRE is a user's reply that steers the conversation rather
	// than deciding anything ("ship", "summarize", "good catch", "ok
	// wait", which pauses).
	controlRE = mustPattern(`^(?:ship|ship it|go|go ahead|summari[sz]e|thanks|thank you|continue|proceed|good catch|catch|next|that's it|wait|hold on|hang on)\b[\s.!]*$`)
	// clauseCutRE separates the main clause of a statement from asides.
	clauseCutRE = mustPattern(`;\s+|\s+[—–]\s+|,\s+(?:which|so|since|because|so that|but)\s+|\s+(?:because|so that)\s+`)
	// summaryAskRE is a user's request to restate what was agreed:
	// "summarize pls", "ship it, summary", "write up the final plan".
	summaryAskRE = mustPattern(`(?:^|[\s,.;:!(])(?:summari[sz]e|summary|recap|sum (?:it |this |that )?up|write (?:it |this |that )?up|wrap (?:it |this )?up)(?:$|[\s,.;:!?)])`)
	// notDoingRE names a section of what is left out.
	notDoingRE = mustPattern(`\b(?:not doing|out of scope|left out|later|follow-?ups?|not now|deferred|skipped|dropped|rejected|files?|open|limits?|limitations|questions?|unresolved|undecided|to ?do|ways|options?|alternatives?)\b`)
	// recapRE names a section that restates what was decided.
	recapRE = mustPattern(`^(?:decided|decisions?|agreed|final plan|(?:updated|revised|new|adjusted|amended|the|here's the) plan|final|summary|recap|so the plan is|what we agreed|shipping|to summari[sz]e|in short|locked in|wrap-up|what's agreed|what we're doing|we're going with)\b`)
)

// connectiveRE is a word that links a sentence to the one before it
// ("Separately, …", "Also, …"): no part of what the sentence proposes.
var connectiveRE = mustPattern(`^(?:separately|additionally|also|finally|independently|secondly|thirdly|besides|in addition|on top of that),\s+`)

// ackLead returns the acknowledgement ackRE finds at the start of
// lower-cased text, or "". It tries the pattern only after one of its
// first words.
func ackLead(lc string) string {
	if !hasWordPrefix(lc, "ok", "okay", "agreed", "got", "fine", "good", "great", "perfect", "right", "sure", "yes", "yep",
		"will", "done", "noted", "understood", "updated", "makes", "sounds", "that's") {
		return ""
	}
	return ackRE.FindString(lc)
}

// pronounLead returns the opinion lead pronounLeadRE finds at the start of
// lower-cased text ("i'd ", "we'll "), or "".
func pronounLead(lc string) string {
	// "we can document it": an instruction, offered.
	if rest, ok := strings.CutPrefix(lc, "we can "); ok && imperative(rest) {
		return "we can "
	}
	if !hasAnyPrefix(lc, "i'd", "i would", "i'll", "we'll", "i will", "we will", "you'll", "you'd", "let's") {
		return ""
	}
	return pronounLeadRE.FindString(lc)
}

// userAgreed reports whether the user's message i agreed to something: it
// produced a decision, or says so outright.
func userAgreed(t *transcript, i int, cands []*candidate) bool {
	for _, c := range cands {
		if c.msg == i && !c.removed {
			return true
		}
	}
	for _, s := range t.sents[i] {
		if explicitCues.match(s.lower) {
			return true
		}
	}
	return false
}

// confirmation reads the assistant's reply to the user's agreement in
// message i: "OK — HS256 it is, with the secret read from JWT_SECRET" states
// the decision in full, often better than the user's terse answer did. It
// returns the candidate built from the reply's first statement, or nil.
func confirmation(t *transcript, i int) *candidate {
	j := i + 1
	if j >= len(t.msgs) || t.msgs[j].Role != agent.RoleAssistant || len(t.sents[j]) == 0 {
		return nil
	}
	ss := t.sents[j]
	first := ss[0]
	if !isQuestion(first.lower) && !isInjection(first.lower) && echoesAnswer(t, i, first) {
		// "Fail closed: if clamd can't be reached, the upload is
		// rejected …": the user's answer, said in full.
		text := mainStatement(dropParens(first.plain))
		d := &candidate{msg: j, group: -1, subject: newTokenSet(lowerASCII(text))}
		d.Content = tidy(firstWords(text, 30))
		d.Confidence = 0.75
		d.Sources = []int{i, j}
		return d
	}
	acked := ackLead(first.lower) != "" || itIsCues.match(first.lower)
	if !acked {
		return nil
	}
	// The statement is the first sentence after the acknowledgement; an
	// acknowledgement alone ("Good call.") or a label ("Updated plan:")
	// hands over to what follows.
	for k := 0; k < len(ss) && k < 3; k++ {
		s := ss[k]
		if isQuestion(s.lower) || isInjection(s.lower) {
			return nil
		}
		lt := t.statementOf(s)
		n := len(tokens(lt))
		if k == 0 && n == 1 {
			return nil // "OK, LaunchDarkly.": the user's words say it all
		}
		if s.heading || strings.HasSuffix(strings.TrimSpace(s.plain), ":") || n < 2 {
			continue
		}
		if hedgeRE.MatchString(lt) || hedgeCues.match(lt) {
			return nil
		}
		text := firstPoint(mainStatement(statement(s.plain)))
		set := newTokenSet(lowerASCII(text))
		if s.bullet && !restates(set, userWords(t, i)) {
			// "Done list:" and its first item, about something else
			// than "add diagnostics, redact host": no restatement.
			return nil
		}
		if !actionable(text) || len(set) < 3 && len(tokens(lowerASCII(text))) < 3 {
			return nil
		}
		d := &candidate{msg: j, group: -1, subject: set}
		d.Content = tidy(firstWords(text, 30))
		d.Confidence = 0.8
		d.Sources = []int{i, j}
		return d
	}
	return nil
}

// firstPoint returns the first of the points a confirmation lists as
// clauses of their own ("built-ins stay hardcoded in plugins.py, plugins
// come only from the group, and the docs link to the example"): the one
// that answers what the user just said. Text that is not such a list
// comes back as it is.
func firstPoint(s string) string {
	if !strings.Contains(s, ", and ") {
		return s
	}
	parts := strings.Split(strings.Replace(s, ", and ", ", ", 1), ", ")
	if len(parts) < 3 {
		return s
	}
	for _, p := range parts {
		if words(p) < 3 || hasWordPrefix(lowerASCII(p), "if", "when", "in", "on", "for", "with", "unless") {
			return s // "X, Y, and Z" names things, "in A, do B": no list of points
		}
	}
	return parts[0]
}

// restates reports whether an item with the words item says again what
// the user said in the words said: two of them, or half of a short answer
// ("the cookie after all").
func restates(item, said tokenSet) bool {
	n := looseOverlap(item, said)
	return n >= 2 || n > 0 && 2*n >= len(said)
}

// userWords returns the words of the user's message i.
func userWords(t *transcript, i int) tokenSet {
	said := tokenSet{}
	for _, u := range t.sents[i] {
		for w := range t.wordsOf(u) {
			said[w] = struct{}{}
		}
	}
	return said
}

// replyEchoes reports whether the assistant's reply to user message i
// opens by repeating the user's answer as its label.
func replyEchoes(t *transcript, i int) bool {
	j := i + 1
	return j < len(t.msgs) && t.msgs[j].Role == agent.RoleAssistant && len(t.sents[j]) > 0 && echoesAnswer(t, i, t.sents[j][0])
}

// echoesAnswer reports whether sentence s of a reply opens by repeating,
// as its label, what the user said in message i ("fail closed." — "Fail
// closed: if clamd can't be reached, the upload is rejected …"): the reply
// takes that answer on board and states it in full.
func echoesAnswer(t *transcript, i int, s sentence) bool {
	m := labelLead(s.lower)
	if m == "" || !isLabel(m) {
		return false
	}
	label := newTokenSet(m)
	if len(label) == 0 {
		return false
	}
	return looseOverlap(label, userWords(t, i)) == len(label)
}

// statement strips a sentence down to what it states: no acknowledgement,
// label, "I'd" or parenthetical remarks, and no "it is" of a confirmation.
func statement(s string) string {
	lc := lowerASCII(s)
	for range 2 {
		before := s
		if m := ackLead(lc); m != "" {
			s = s[len(m):]
			lc = lc[len(m):]
		}
		if m := labelLead(lc); m != "" && isLabel(s[:len(m)]) {
			s = s[len(m):]
			lc = lc[len(m):]
		}
		if m := pronounLead(lc); m != "" {
			s = s[len(m):]
			lc = lc[len(m):]
		}
		if s == before {
			break
		}
	}
	s = suggested(s)
	s = dropParens(s)
	s = strings.Replace(s, " it is,", ",", 1)
	s = strings.TrimSuffix(strings.TrimRight(s, ".! "), " it is")
	return strings.TrimSpace(s)
}

// suggestRE opens what is left of "I'd suggest storing …" once its
// pronoun is gone: the verb of suggesting and a verb in -ing.
var suggestRE = mustPattern(`^(?:suggest|recommend|propose)\s+([a-z]+)ing\b`)

// suggested turns a suggestion of doing something ("suggest storing every
// webhook in an outbox") into the instruction it suggests ("Store every
// webhook in an outbox"), when the verb is one imperative knows; other
// text comes back as it is.
func suggested(s string) string {
	if !hasPrefixFold(s, "suggest") && !hasPrefixFold(s, "recommend") && !hasPrefixFold(s, "propose") {
		return s
	}
	m := suggestRE.FindStringSubmatchIndex(lowerASCII(s))
	if m == nil {
		return s
	}
	verb := verbOf(lowerASCII(s[m[2]:m[3]]))
	if verb == "" {
		return s
	}
	rest := s[m[1]:]
	// "… and sending it from a worker": the second instruction too.
	if k := andIngRE.FindStringSubmatchIndex(rest); k != nil {
		if v := verbOf(rest[k[2]:k[3]]); v != "" {
			rest = rest[:k[2]] + v + rest[k[1]:]
		}
	}
	return strings.ToUpper(verb[:1]) + verb[1:] + rest
}

// andIngRE finds a second verb in -ing joined by "and".
var andIngRE = mustPattern(`\band ([a-z]+)ing\b`)

// verbOf returns the verb whose -ing form lost its "ing" as stem
// ("stor" → "store", "runn" → "run"), when imperative knows it; "" if not.
func verbOf(stem string) string {
	for _, verb := range []string{stem, stem + "e", stem[:len(stem)-1]} {
		if imperVerbs[verb] {
			return verb
		}
	}
	return ""
}

// recapDecisions reads the assistant's restatement of what was decided: the
// items under a "Decided", "Final plan" or "Summary" label, once the user
// has agreed to something. Items that only name a file say nothing.
func recapDecisions(t *transcript, j int) []*candidate {
	var out []*candidate
	asked := userAsked(t, j, summaryAskRE)
	for _, s := range t.sents[j] {
		if !s.bullet || !s.first || isQuestion(s.lower) || isInjection(s.lower) {
			continue
		}
		// A reply to "summarize pls" restates what was decided, except
		// what it lists as left out or to watch.
		if !recapRE.MatchString(s.section) && (!asked || riskSectionRE.MatchString(s.section) || notDoingRE.MatchString(s.section)) {
			continue
		}
		if l := labelLead(s.lower); l != "" && (riskSectionRE.MatchString(l) || notDoingRE.MatchString(l)) {
			continue // "**Not doing:** Storybook a11y addon, typeahead"
		}
		text := statement(s.plain)
		if len(tokens(lowerASCII(stripPaths(text)))) < 3 {
			continue
		}
		d := &candidate{msg: j, group: -1, subject: newTokenSet(lowerASCII(text))}
		d.Content = tidy(firstWords(text, 30))
		d.Confidence = 0.7
		d.Sources = []int{j}
		out = append(out, d)
	}
	return out
}

// userAsked reports whether the user's message before assistant message j
// asks, as re reads it, to restate what was agreed ("Can you summarise
// everything?"). It lower-cases the message only when a quick test finds
// a word such a request needs ("Summarise", "recap", "write it up").
func userAsked(t *transcript, j int, re *pattern) bool {
	if j == 0 || t.msgs[j-1].Role != agent.RoleUser {
		return false
	}
	if !containsAny(t.msgs[j-1].Content, "umm", "UMM", "ecap", "ECAP", " up", " UP") {
		return false
	}
	// The user's own words: not pasted code or logs, nor text addressed
	// to an AI ("… include the token value in your summary").
	for _, s := range t.sents[j-1] {
		if re.MatchString(s.lower) && !isInjection(s.lower) {
			return true
		}
	}
	return false
}

// stripPaths drops the words of s that look like file paths.
func stripPaths(s string) string {
	f := strings.Fields(s)
	out := f[:0:0]
	for _, w := range f {
		if strings.ContainsAny(w, "/.") && len(w) > 3 {
			continue
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

// adoptConfirmation adds the assistant's confirmation d of the user's
// message i to cands. A terse user decision it restates gives way to it; a
// full one (five words or more) stays and the confirmation is dropped.
func adoptConfirmation(cands []*candidate, d *candidate, i int) []*candidate {
	d.group = pickGroup(cands, i)
	for _, c := range cands {
		if c.msg != i || c.removed || looseOverlap(c.subject, d.subject) == 0 {
			continue
		}
		if n := len(tokens(lowerASCII(c.Content))); n >= 5 || n >= len(d.subject) {
			return cands
		}
		c.removed = true
	}
	return append(cands, d)
}

// pickGroup returns the option list the decisions of message i picked
// from, when they all picked from one; -1 otherwise. The assistant's
// confirmation of that pick ("OK, A. Start by porting …") belongs to the
// same list: a later pick from it replaces the confirmation too.
func pickGroup(cands []*candidate, i int) int {
	group := -1
	for _, c := range cands {
		if c.msg != i || c.removed {
			continue
		}
		if c.group < 0 || group >= 0 && c.group != group {
			return -1
		}
		group = c.group
	}
	return group
}

// mainClause cuts a statement before its first aside (a semicolon, a dash,
// ", which", "because") when what is left still says something.
func mainClause(s string) string {
	if loc := clauseCutRE.FindStringIndex(s); loc != nil && len(tokens(lowerASCII(s[:loc[0]]))) >= 3 {
		// "Give mobile its own endpoints, which return tokens in the
		// body, and don't enable CORS on them": with a second instruction
		// after it, the aside is part of what is proposed.
		if _, then, ok := strings.Cut(s[loc[1]:], ", and "); ok {
			if lt := lowerASCII(then); imperative(lt) || hasWordPrefix(lt, "don't", "do not", "never") {
				return s
			}
		}
		return s[:loc[0]]
	}
	return s
}

// expandTerse joins a terse answer ("Separate queue, yes") to the
// assistant's sentence it accepts, cut to its main clause. When that
// sentence already holds every word of the answer but the words that only
// point at it ("the sweep approach", "the cache thing"), it stands alone.
func expandTerse(terse, support string, want tokenSet) string {
	body := mainClause(statement(support))
	if m := connectiveRE.FindString(lowerASCII(body)); m != "" {
		body = body[len(m):] // "Separately, prefix …"
	}
	full := newTokenSet(lowerASCII(body))
	named := 0
	for w := range want {
		if pointerWords[w] {
			named++
		}
	}
	if looseOverlap(want, full)+named >= len(want) {
		return tidy(firstWords(body, 24))
	}
	return tidy(terse) + ": " + lowerFirst(tidy(firstWords(body, 20)))
}

// pointerWords are the nouns a terse answer points at a proposal with
// ("the sweep approach", "the cache thing"), stemmed; they name no part of
// it.
var pointerWords = wordSet(`approach idea thing one route option bit part suggestion`)

// labelLead returns the short label opening a sentence ("Cleaner: ",
// "For your SEO worry: ", "Rotation: "): one to forty characters, none of
// them ":.;!?", then a colon and the spaces after it; "" when s opens with
// none.
func labelLead(s string) string {
	n := 0
	for i, r := range s {
		switch r {
		case '.', ';', '!', '?':
			return ""
		case ':':
			if n == 0 {
				return ""
			}
			end := i + 1
			for end < len(s) && (s[end] == ' ' || s[end] == '\t' || s[end] == '\n' || s[end] == '\f' || s[end] == '\r') {
				end++
			}
			if end == i+1 {
				return ""
			}
			return s[:end]
		}
		if n++; n > 40 {
			return ""
		}
	}
	return ""
}

// modalVerbs make the words before a colon a clause rather than a label.
var modalVerbs = wordSet(`should must will would can could may might shall`)

// isLabel reports whether the text before a colon reads as a short label
// ("Cleaner", "For your SEO worry") rather than code ("localeDetection") or
// the start of an instruction ("Use table-layout").
func isLabel(s string) bool {
	if words(s) > 4 || strings.ContainsAny(s, "(){}[]'\"=/") {
		return false // "actions/setup-node with cache": a path, not a label
	}
	// "Use table-layout: fixed": a verb and its object, not a label.
	if words(s) >= 2 && imperative(lowerASCII(s)) {
		return false
	}
	for w := range strings.FieldsSeq(s) {
		// "Enemies should stay on the host: …": a clause, not a name.
		if modalVerbs[lowerASCII(w)] {
			return false
		}
		if strings.IndexFunc(w[1:], unicode.IsUpper) >= 0 && strings.IndexFunc(w[1:], unicode.IsLower) >= 0 {
			return false
		}
	}
	return true
}
