package offline

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/baton-dev/baton/agent"
)

// The decision rules read a brainstorm as a dialogue. The assistant makes
// proposals: options to choose from (a list introduced as "Three ways:"),
// plan items (a list of what it will do) and recommendations in prose ("I'd
// read the count from an env var"). The user answers: picks an option by
// number or by echoing its name, accepts ("yes", "do that", "ship it"),
// rejects ("no Redis", "skip the prefetcher"), reverses an earlier choice,
// states their own decision, or only adds facts and questions. A decision
// is an accepted proposal, said as one sentence: in the assistant's words
// when the user accepted tersely, in the user's when they said it in full.

// proposal is something an assistant message put forward.
type proposal struct {
	msg    int      // the assistant message
	item   int      // its list item, -1 for a prose recommendation
	list   int      // which list of the message the item is in
	label  string   // "1", "b": the label of a numbered or lettered item
	set    tokenSet // the words of what it says
	title  tokenSet // the words of its name ("Dedup table"), for echoes
	option bool     // one of several alternatives, accepted only when picked
	pathy  bool     // an item about a file ("`a.go`: new, holds X")
	// heads marks a numbered item that only names what the lettered
	// options under it decide ("3. Row-level restrictions:"): accepting
	// "all of it" does not accept it.
	heads bool

	// name and body are the item's name ("Dedup table") and what it says
	// about it; a prose recommendation has only a body.
	name, body string
	// topic is the label the item's list sits under ("routing strategy"),
	// lower-cased; "" when none.
	topic string
	text  string // the proposal as a decision, once made; "" if it is none
	made  bool
	// fix is what a later sentence of the item says to do when its first
	// sentence only describes ("Versioning: X = 1 in base.py. On a
	// mismatch, skip the plugin."); "" when none.
	fix string
}

// decision returns the proposal said as a decision, or "" when what it
// says is no decision (a fact, a concern, too few words). It is worked out
// on first use: most proposals are never accepted.
func (p *proposal) decision() string {
	if p.made {
		return p.text
	}
	p.made = true
	var text string
	switch {
	case p.name == "":
		text = decisionText(p.body)
	case p.pathy:
		// "`a.go` — new, holds X": what a file list says a file gets
		// is the work of the decisions above it, not one of its own.
		return ""
	case p.body != "" && imperative(lowerASCII(p.name)) && explains(lowerASCII(decisionText(p.body))):
		// "**Give it the sparsity pattern**: the Jacobian is banded": the
		// name says what to do, the rest why.
		text = p.name
	case p.option && p.body != "" && hasWordPrefix(lowerASCII(p.body), "you", "your"):
		// "**BGAppRefreshTask**: you ask the system to wake the app …":
		// the option is its name; the rest tells how it works.
		text = p.name
	case p.body != "" && (!traits(p.body) || mixRE.MatchString(lowerASCII(p.name))):
		// "**Both**: KMS for CI, age for people": a name that only
		// combines the other options says nothing alone.
		text = joinName(p.name, decisionText(p.body))
	case p.body != "" && p.topic != "" && len(tokens(lowerASCII(p.name))) == 1 && !imperative(lowerASCII(p.name)):
		// "Routing strategy: Sub-path": a one-word pick says what it
		// decides with the question its list answers; "Use the library"
		// says it alone.
		text = p.topic + ": " + p.name
	default:
		text = p.name
	}
	if rest := soInstruction(text); rest != "" && p.name == "" {
		// "Hash#except is native since 3.0, so delete the backport": the
		// instruction, without the reason that leads to it.
		text = rest
	}
	verb := strings.TrimPrefix(text, p.name+": ")
	if lt := lowerASCII(text); containsAny(lt, " not ", "wouldn't", "push back") && adviseAgainstRE.MatchString(lt) || strings.ContainsAny(text, "./") && len(tokens(lowerASCII(stripPaths(text)))) == 0 {
		// "I'd not do it", "I'd push back on this" advise against;
		// "CHANGELOG.md, README.md" only lists files.
		return ""
	}
	if len(tokens(lowerASCII(text))) < 2 && !(p.option && text == p.name) {
		return ""
	}
	if !p.option && !actionable(mainClause(verb)) {
		// "1. A pre-commit hook in .pre-commit-config.yaml running
		// check_sops.py: it fails if …": a plan item names something to
		// add and says how it behaves.
		name, _, named := strings.Cut(text, ": ")
		if p.name != "" {
			name, named = p.name, true
		}
		if !named || !hasWordPrefix(lowerASCII(name), "a", "an") || words(name) < 3 || words(name) > 16 || isStatement(lowerASCII(name)) || saysWhatDoes(lowerASCII(name)) {
			return ""
		}
		text = name
	}
	p.text = tidy(firstWords(text, 20))
	if p.fix != "" {
		p.text = strings.TrimRight(p.text, ".!…") + "; " + lowerFirst(tidy(firstWords(statement(p.fix), 12)))
	}
	return p.text
}

// joinName joins an item's name and what it says of it: "Redis: a 5
// minute TTL", but "Keep last values and add a reachability sensor" when
// the rest runs on from the name.
func joinName(name, rest string) string {
	if hasWordPrefix(rest, "and", "with", "plus", "or", "to", "for", "via", "using", "so", "but") {
		return name + " " + rest
	}
	return name + ": " + rest
}

// mixRE is an option's name that only combines the others: "Both",
// "Hybrid", "A mix".
var mixRE = mustPattern(`^(?:(?:a |the )?(?:both|hybrid|mix|mixed|combo|combination|combined|all three|all of them)|(?:a |the )?(?:hybrid|mixed|combined) (?:approach|option|setup))[.!:]?$`)

// adviseAgainstRE finds advice not to do something: "I'd not do it",
// "I wouldn't bother".
var adviseAgainstRE = mustPattern(`\b(?:i'd|i would|we'd|we would) not\b|\b(?:i|we) wouldn't\b|\bpush back on (?:this|that|it)\b`)

// explains reports whether lower-cased text, what an item says after its
// name, states how things are about the thing it names ("the Jacobian is
// banded", "it is cheap"): a reason, not more of what to do.
func explains(lc string) bool {
	return hasWordPrefix(lc, "the", "this", "that", "it", "its", "it's") && isStatement(lc)
}

// described returns what a list item says, as a decision, when it
// describes the design rather than instructs ("a reader is only loaded
// when someone asks for that format"): "" when it is too short to say
// anything or warns rather than describes.
func (p *proposal) described() string {
	text := decisionText(p.body)
	switch {
	case p.name != "" && text == "":
		text = p.name
	case p.name != "" && !p.pathy:
		text = joinName(p.name, text)
	}
	lc := lowerASCII(text)
	if len(tokens(lc)) < 3 || riskCues.match(lc) || hedgeRE.MatchString(lc) || isQuestion(lc) || strings.Contains(lc, "push back") && adviseAgainstRE.MatchString(lc) {
		return ""
	}
	return tidy(firstWords(text, 20))
}

// traits reports whether what a named item says about it lists its
// traits ("free, zero config, no key rotation", "encrypted, incremental")
// rather than how it works: it opens with two or more short phrases
// separated by commas and no verb that instructs. Picking such an option,
// or accepting such a plan item, decides on its name; its traits are the
// reasons.
func traits(body string) bool {
	lc := lowerASCII(body)
	if imperative(lc) {
		return false
	}
	first, _, _ := strings.Cut(lc, ". ")
	parts := strings.Split(first, ", ")
	if len(parts) < 2 {
		return false
	}
	return shortParts(parts[:2], 3) || len(parts) >= 3 && shortParts(parts[:3], 5)
}

// shortParts reports whether every phrase of parts has between one and
// most words: two phrases of three words ("free, zero config") or three
// of five ("built for the App Router, works in Server Components, handles
// routing") list traits; longer ones say how something works.
func shortParts(parts []string, most int) bool {
	for _, part := range parts {
		if n := words(part); n == 0 || n > most {
			return false
		}
	}
	return true
}

// Patterns of the dialogue rules. Each matches lower-cased plain text.
var (
	// optionsLead introduces a list of alternatives.
	optionsLead = cues(`option* famil* way ways choice* approach* alternative* candidates comparison compared pick_between choose_between pick_a pick_one decide_between either fixes realistic routes strateg* flavor* flavour*`)
	// acceptRE is a clause that only says yes.
	acceptRE = mustPattern(`^(?:(?:ok|okay|k|yes|yep|yeah|yup|sure|fine|good|great|perfect|agreed|agree|exactly|correct|right|cool|nice|lgtm|sounds good|sounds right|looks good|looks right|makes sense|do that|do it|do this|do both|go|go ahead|go for it|ship it|ship|let's do it|let's do that|lets do it|that works|works for me|works|fine by me|fine for now|acceptable|acceptable for now|good enough|all of it|that's it|both|on all of it|agreed on all of it|yes to all|all good|perfect thanks|thanks|thank you|good catch|handle that|deal|done deal|please|approved|alright|all right|sgtm|proceed|all of them|yes to both|yes to all (?:that|of that|of it|of them|of these|three|four|five)|all of that|on all points|looks good to me|sounds good to me|(?:the |that |this )?plan (?:works|looks good|sounds good)|(?:the )?rest (?:is |looks |sounds )?(?:fine|good|ok|okay|great)|(?:go ahead|proceed|continue|carry on|go on) with (?:the rest|it|that|this|the plan|everything|all of it|all of that|those)|everything else (?:is |looks |sounds )?(?:fine|good|ok|okay|great))\b[\s,.!:—–-]*|(?:👍|✅|\+1)[\s,.!:—–-]*)+$`)
	// acceptCuesAny are words that accept wherever they stand in a short clause.
	acceptCuesAny = cues(`do_that do_it do_both ship_it sounds_good looks_good looks_right go_ahead agreed agree lgtm makes_sense yes yep yeah perfect exactly works_for_me fine_for_now good_enough go`)
	// yesLeadRE opens a clause that agrees before it qualifies.
	yesLeadRE = mustPattern(`^(?:ok|okay|yes|yep|yeah|sure|fine|good|great|agreed|sounds good|looks good)\b`)
	// yesCues are the words of a short clause that accepts what it names.
	yesCues = cues(`yes yep yeah ok okay fine good great sure agreed perfect`)
	// strongShortRE lets a decision of one or two words stand: "let's go
	// with HS256", "in-process is fine", "Nuke it is".
	strongShortRE = mustPattern(`\b(?:let'?s|we'll|we will|we should) (?:just )?(?:go with|use|do|pick|keep|stick with)\b|\bgo with\b|\bit is\b|\b(?:is|are) (?:fine|good|ok|okay|the way)\b|\bstick with\b`)
	// factQuestionRE opens a question about how things are ("How big is
	// it?", "Does every event carry an ID?"), not about what to do.
	factQuestionRE = mustPattern(`^(?:is|are|was|were|does|do|did|can|could|has|have|how (?:many|much|big|often|long|is|are|do|does)|where|who|when|what(?:'s| is| are)|which (?:version|mcu|database|db))\b`)
	// answerLeadRE opens a clause that answers yes or no.
	answerLeadRE = mustPattern(`^(?:(?:lol|oh|ah|well|hmm|ok|okay|so|and)\W+)?(?:yes|yep|yeah|no|nope|nah)\b`)
	// nameYesRE is a clause that answers yes or no of a name: "packages
	// yes".
	nameYesRE = mustPattern(`^([a-z][\w-]*(?: [a-z][\w-]*)?) (?:yes|yep|no|nope)\b`)
	// usesRE asks what a project has or uses.
	usesRE = mustPattern(`^(?:do|does) (?:you|it|the \w+) (?:use|have|run|ship|support)\b|^(?:are you|is it) (?:using|running)\b|^(?:is|are) there\b`)
	// explicitChoiceRE marks a clause that chooses, not only answers.
	explicitChoiceRE = mustPattern(`\b(?:let'?s|go with|we'll|do that|do it|use|add|keep|put|make|yes to)\b`)
	// pickWords name an option without a digit ("option b").
	pickWords = cues(`option approach choice number`)
	// recommendCues mark a prose recommendation of the assistant.
	recommendCues = cues(`i'd i_would i'll i_will we'll we_can_start i_recommend recommend suggest my_pick the_pragmatic pragmatic_choice is_the_right_call is_the_one the_usual_fix the_usual_trick best_bet go_with start_with`)
	// softLeadRE opens a sentence that proposes without a cue word.
	softLeadRE = mustPattern(`^(?:then|so|cleaner|simplest|fix)\b`)
	// factVerbs make a statement of how things are when they come among
	// its first words: "X is Y", "the backend has to …", "the loader
	// reads …", "the client needs …".
	factVerbs = wordSet(`is are was were has have had can gets means costs takes comes usually already only does doesn't isn't aren't needs returns reads resolves owns lives live matters matter exists exist`)
	// factLeadRE opens a statement of how things are.
	factLeadRE = mustPattern(`^(?:there's|there is|there are|it's|this is|that's|which|because|since)\b`)
	// reportRE opens a report of what someone did or saw ("I ran a quick
	// check with support: …"), which is a fact.
	// "The query says three tables have no key" reports what a tool or
	// someone said ("the page shows the last 50 orders" may be wanted).
	reportRE = mustPattern(`^(?:i|we) (?:just |already )?(?:ran|saw|had|did|found|got|read|heard|told|asked|tried|looked|pulled|checked|measured|noticed|talked|spoke|tested|started|began|wrote|spent|profiled|benchmarked|counted|timed|grepped)\b|^(?:the |our |my )?[a-z][\w.-]*(?: [a-z][\w.-]*)? (?:says|said|showed|reported|printed)\b`)
	// evaluation marks a user's verdict that makes a statement a choice.
	evaluation = cues(`fine ok okay good enough right better acceptable it_is the_way stays stay wins`)
	// cautionCues mark a warning ("I'd be careful with option 2", "watch
	// out for …"): a caveat to weigh, not a proposal to accept.
	cautionCues = cues(`be_careful careful_with watch_out beware heads-up caveat keep_in_mind bear_in_mind keep_an_eye`)
	// notDecision marks a remark about pasted text being data, not
	// instructions: neither a proposal nor a concern.
	notDecision = cues(`not_acting_on ignoring_it i'm_ignoring not_an_instruction isn't_an_instruction not_going_to_pretend haven't_approved`)
)

// assistantProposals returns the proposals of assistant message j, cached.
func (t *transcript) assistantProposals(j int) []proposal {
	if j < 0 || j >= len(t.msgs) || t.msgs[j].Role != agent.RoleAssistant {
		return nil
	}
	if t.props == nil {
		t.props = make([][]proposal, len(t.msgs))
		t.propsDone = make([]bool, len(t.msgs))
	}
	if !t.propsDone[j] {
		t.props[j] = parseProposals(t, j)
		t.propsDone[j] = true
	}
	return t.props[j]
}

// parseProposals reads the options, plan items and recommendations of
// assistant message j.
func parseProposals(t *transcript, j int) []proposal {
	ss := t.sents[j]
	var out []proposal
	lead := ""                         // the prose sentence before the current list
	optionList := false                // the current list offers alternatives
	list := -1                         // index of the current list in the message
	offers := false                    // the message has introduced alternatives
	parentNum, parentList := "", -1    // the numbered item lettered items sit under
	parentAt, parentNames := -1, false // its proposal in out; it ends in a colon
	for k := 0; k < len(ss); k++ {
		s := ss[k]
		if isInjection(s.lower) || notDecision.match(s.lower) || cautionCues.match(s.lower) {
			continue
		}
		if !s.bullet {
			lead = s.lower
			if s.heading {
				lead = s.section
			}
			optionList = false
			offers = offers || optionsLead.match(lead)
			if isQuestion(s.lower) || s.heading {
				continue
			}
			if rest := soInstruction(s.plain); rest != "" {
				// "…, so keep the expression in one function": what the
				// reasons before it lead to.
				out = append(out, proposal{msg: j, item: -1, body: rest, set: newTokenSet(lowerASCII(rest))})
				continue
			}
			if opts := inlineOptions(s.plain); len(opts) > 0 {
				list++
				for _, o := range opts {
					out = append(out, proposal{msg: j, item: -1, list: list, label: o.label, option: true, body: o.text,
						set: newTokenSet(lowerASCII(o.text)), title: newTokenSet(lowerASCII(firstWords(o.text, 6)))})
				}
				continue
			}
			if optionsLead.match(s.lower) && strings.Contains(s.lower, ", or ") {
				// "Options: treat RX as alive when the bus is quiet, or have
				// the supervisor check bus-off": offered, not proposed, and
				// picked by place ("second one") or by name.
				if opts := proseOptions(s.plain); len(opts) > 0 {
					list++
					for k, o := range opts {
						out = append(out, proposal{msg: j, item: -1, list: list, label: string(rune('a' + k)), option: true, body: o,
							set: newTokenSet(lowerASCII(o)), title: newTokenSet(lowerASCII(firstWords(o, 6)))})
					}
				}
				continue
			}
			if hedgeRE.MatchString(s.lower) {
				continue
			}
			if recommendCues.match(s.lower) || softLeadRE.MatchString(s.lower) || shouldDo(s.lower) || ackLead(s.lower) != "" && k == 0 || proposesInProse(t, s) {
				out = append(out, proposal{msg: j, item: -1, body: s.plain, set: t.wordsOf(s)})
			} else if rest := unlead(linkRE, s.lower); neverButDo(rest) {
				// "And in your own logs, never put …; log a key id instead",
				// without its "And".
				out = append(out, proposal{msg: j, item: -1, body: s.plain[len(s.plain)-len(rest):], set: t.wordsOf(s)})
			}
			continue
		}
		if !s.first {
			continue
		}
		switch {
		case k == 0 || !ss[k-1].bullet:
			// "(a) …, (b) …, (c) …": a lettered list offers choices.
			optionList = optionsLead.match(lead) || strings.Contains(s.section, "option") ||
				offers && k > 0 && ss[k-1].heading || s.label != "" && s.label[0] >= 'a'
			list++
		case s.label != "" && ss[k-1].item != s.item && itemLabel(ss, k-1) == "":
			// "**Idempotency** — … Options:" over "1. …", "2. …": a
			// labelled list under an item is a list of its own.
			optionList = optionsLead.match(ss[k-1].lower) || s.label[0] >= 'a'
			list++
		}
		if s.section != "" && (recapRE.MatchString(s.section) || riskSectionRE.MatchString(s.section)) {
			continue
		}
		// An item runs over its sentences; its first says what it is.
		first := s.plain
		title, rest := itemTitle(s.raw, first)
		if (words(first) < 4 || title != "" && rest == "") && k+1 < len(ss) && ss[k+1].item == s.item && !ss[k+1].first {
			// "**Key per attempt**" alone on its line: what it is comes
			// in the item's next sentence or the items under it.
			first += " " + ss[k+1].plain
			title, rest = itemTitle(s.raw, first)
		}
		if isQuestion(lowerASCII(first)) || asksOpen(s) {
			continue // "Things to decide: whether you want trace IDs in logs"
		}
		p := proposal{msg: j, item: s.item, list: list, label: s.label, option: optionList, name: title, body: rest, topic: s.section,
			pathy: looksLikeFile(strings.Trim(title, "` ")), set: newTokenSet(lowerASCII(first))}
		if !imperative(t.statementOf(s)) && !imperative(lowerASCII(rest)) {
			p.fix = itemFix(t, ss, k)
		}
		if p.name == "" {
			p.body = first
		}
		// "3. Row-level checks: (a) … (b) …": lettered items right under
		// a numbered one are alternatives for it.
		switch {
		case s.label != "" && s.label[0] >= '0' && s.label[0] <= '9':
			parentNum, parentList, parentAt = s.label, list, len(out)
			parentNames = strings.HasSuffix(strings.TrimSpace(first), ":")
		case s.label != "" && parentNum != "" && parentList == list:
			p.option = true
			out[parentAt].heads = parentNames
		default:
			parentNum = ""
		}
		p.title = newTokenSet(lowerASCII(title))
		if p.pathy {
			// An item about a file is named by the file: "OrderRow.tsx",
			// "OrderRow"; what follows the path describes it.
			p.title = pathTitle(lowerASCII(strings.Trim(title, "` ")))
		}
		if len(p.title) == 0 {
			p.title = newTokenSet(lowerASCII(firstWords(first, 6)))
		}
		out = append(out, p)
	}
	return out
}

// neverRE opens advice not to do something ("never put the raw key in
// the log", "in your own logs, don't …").
var neverRE = mustPattern(`^(?:in [^,;]{1,40},\s+)?(?:never|don't|do not)\s+`)

// linkRE is a word that links a sentence to the one before it.
var linkRE = mustPattern(`^(?:and|also|so|but)\s+`)

// neverButDo reports whether lower-cased s advises against something and
// says what to do instead: "never put the raw key in the katip context;
// log a key id instead". Advice of both kinds is a proposal.
func neverButDo(lc string) bool {
	if !neverRE.MatchString(lc) {
		return false
	}
	_, fix, ok := strings.Cut(lc, "; ")
	return ok && imperative(fix)
}

// loneLabelledItem returns the item of a message's only numbered or
// lettered list item, or -2 when it has none or several items.
func loneLabelledItem(ss []sentence) int {
	item := -2
	for _, s := range ss {
		switch {
		case s.item < 0 || s.item == item:
		case item == -2 && s.label != "":
			item = s.item
		default:
			return -2
		}
	}
	return item
}

// choseOutright reports whether one of cands was chosen outright ("let's
// go with HS256"): what the opening message decides on its own.
func choseOutright(cands []*candidate) bool {
	for _, c := range cands {
		if c.Confidence >= 0.9 {
			return true
		}
	}
	return false
}

// itemLabel returns the label of the list item sentence k is in: that of
// the item's first sentence.
func itemLabel(ss []sentence, k int) string {
	for ; k > 0 && !ss[k].first && ss[k-1].item == ss[k].item; k-- {
	}
	return ss[k].label
}

// itemFix returns the first sentence after sentence k, in the same list
// item, that says what to do, or "".
func itemFix(t *transcript, ss []sentence, k int) string {
	for _, s := range ss[k+1:] {
		if s.item != ss[k].item || s.first {
			break
		}
		lc := t.statementOf(s)
		if imperative(lc) {
			return s.plain
		}
		// "On a mismatch, skip the plugin": an instruction under a condition.
		if cond, then, ok := strings.Cut(lc, ", "); ok && hasWordPrefix(cond, "on", "if", "when", "after", "before") && words(cond) <= 6 && (imperative(then) || hasWordPrefix(then, "skip")) {
			return s.plain
		}
	}
	return ""
}

// inlineOption is an alternative offered inside a sentence.
type inlineOption struct{ label, text string }

// inlineLabelRE is the label of an alternative inside a sentence: "(a) ".
var inlineLabelRE = mustPattern(`\(([a-h])\)\s+`)

// saysWhatDoes reports whether lower-cased phrase has a verb said of its
// subject ("a failing loader logs and leaves …"): it describes, it names
// nothing to add.
func saysWhatDoes(lc string) bool {
	for k, w := range strings.Fields(lc) {
		if k > 0 && verbOfSubject(strings.Trim(w, ",.;:")) {
			return true
		}
	}
	return false
}

// proseOptions returns the alternatives a prose sentence offers after a
// colon, joined by ", or " ("Options: treat RX as alive when the bus is
// quiet, or have the supervisor check bus-off"), or nil.
func proseOptions(s string) []string {
	_, rest, ok := strings.Cut(s, ": ")
	if !ok {
		return nil
	}
	parts := strings.Split(strings.TrimRight(rest, ".!"), ", or ")
	if len(parts) < 2 || len(parts) > 4 {
		return nil
	}
	for k, p := range parts {
		parts[k] = strings.TrimSpace(strings.TrimPrefix(p, "either "))
		if words(parts[k]) < 2 {
			return nil
		}
	}
	return parts
}

// inlineOptions returns the lettered alternatives a prose sentence offers
// ("options are (a) raise the limit, or (b) page the results"), or nil
// when it offers fewer than two, lettered from (a) on.
func inlineOptions(s string) []inlineOption {
	if !strings.Contains(s, "(b) ") {
		return nil
	}
	locs := inlineLabelRE.FindAllStringSubmatchIndex(s, -1)
	if len(locs) < 2 {
		return nil
	}
	var out []inlineOption
	for k, loc := range locs {
		label := s[loc[2]:loc[3]]
		if label[0] != byte('a'+k) {
			return nil
		}
		end := len(s)
		if k+1 < len(locs) {
			end = locs[k+1][0]
		}
		text := strings.TrimSpace(s[loc[1]:end])
		text = strings.TrimSuffix(strings.TrimSuffix(text, " or"), ",")
		text = strings.TrimRight(strings.TrimSpace(text), ".;,")
		if words(text) < 2 {
			return nil
		}
		out = append(out, inlineOption{label, text})
	}
	return out
}

// soInstruction returns the instruction a sentence arrives at after ", so"
// ("If you later allow several orgs, every policy changes, so keep the
// expression in one function"), or "" when it has none.
func soInstruction(s string) string {
	k := strings.Index(s, ", so ")
	if k < 0 {
		return ""
	}
	rest := s[k+len(", so "):]
	if !imperative(lowerASCII(rest)) {
		return ""
	}
	return rest
}

// shouldDo reports whether lower-cased text recommends an action with
// "should" and a verb that instructs ("feature access should switch on
// the webhook", "enemies should stay on the host"); "should land around
// 5 ms" or "should be rare" expect, they do not recommend.
func shouldDo(lc string) bool {
	k := strings.Index(lc, "should ")
	if k < 0 || k > 0 && isREWordByte(lc[k-1]) {
		return false
	}
	rest := lc[k+len("should "):]
	rest = strings.TrimPrefix(rest, "also ")
	rest = strings.TrimPrefix(rest, "still ")
	return imperative(rest)
}

// proposesInProse reports whether a prose sentence of the assistant says
// what to do, as an imperative ("Treat the password as compromised and
// rotate it"), after any acknowledgement or label ("OK — use …").
func proposesInProse(t *transcript, s sentence) bool {
	if imperative(s.lower) {
		return true
	}
	// "We can document it in the guide": an instruction, offered.
	if rest, ok := strings.CutPrefix(s.lower, "we can "); ok && imperative(rest) {
		return true
	}
	if c := strings.IndexByte(s.lower, ':'); (c < 0 || c > 40) && ackLead(s.lower) == "" {
		return false // nothing for statement to strip before the verb
	}
	return imperative(t.statementOf(s))
}

// pathTitle returns the words that name a file at lower-cased path p: the
// path, its base name, and the base name without its extension.
func pathTitle(p string) tokenSet {
	set := newTokenSet(p)
	base := p[strings.LastIndexByte(p, '/')+1:]
	set[stem(base)] = struct{}{}
	if k := strings.IndexByte(base, '.'); k > 0 {
		set[stem(base[:k])] = struct{}{}
	}
	return set
}

// pathLeadRE is a list item that opens with a path and a colon.
var pathLeadRE = mustPattern("^`?[\\w./@-]+`?:\\s+")

// leadParenRE is a parenthetical right after an item's name
// ("**Entry points** (`importlib.metadata`): …").
var leadParenRE = mustPattern(`^\([^()]{0,60}\)`)

// boldTitleRE is a list item that opens with its name in bold.
var boldTitleRE = mustPattern(`^\*\*([^*]{1,60})\*\*[:.]?\s*`)

// itemTitle splits a list item into its name ("In-process token bucket",
// "`ratelimit.go`") and what it says about it.
func itemTitle(raw, plain string) (string, string) {
	if m := boldTitleRE.FindStringSubmatch(raw); m != nil {
		title := strings.TrimSpace(withoutEmphasis(m[1]))
		title = strings.TrimRight(title, ":.")
		rest := strings.TrimSpace(strings.TrimPrefix(plain, title))
		rest = strings.TrimLeft(rest, ":.,;—–- ")
		if m := leadParenRE.FindString(rest); m != "" {
			rest = strings.TrimLeft(rest[len(m):], ":.—–-, ")
		}
		if more := labelLead(rest); more != "" && !strings.ContainsAny(m[0], ":.") && words(more) <= 5 && !hasWordPrefix(lowerASCII(more), "or", "and") {
			// "**Hangfire** with SQL Server storage: persistent jobs, …":
			// the name runs on to the colon. "**A** or **B**: …" names
			// two options, not one.
			title = title + " " + strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(more), ":"))
			rest = strings.TrimSpace(rest[len(more):])
		}
		return title, rest
	}
	if strings.IndexByte(plain, ':') > 0 {
		if m := pathLeadRE.FindString(plain); m != "" && looksLikeFile(strings.Trim(strings.TrimSpace(m), "`:")) {
			return strings.TrimRight(strings.TrimSpace(m), ":"), strings.TrimSpace(plain[len(m):])
		}
	}
	lc := lowerASCII(plain)
	if m := labelLead(lc); m != "" {
		head := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(plain[:len(m)]), ":"))
		if looksLikeFile(strings.Trim(head, "`")) || isLabel(head) && words(head) <= 4 {
			return head, strings.TrimSpace(plain[len(m):])
		}
	}
	if !strings.ContainsAny(plain, "—–-") {
		return "", plain
	}
	if m := listedRE.FindString(plain); m != "" {
		head := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(m), "—–-"))
		if looksLikeFile(strings.Trim(head, "`")) {
			return head, strings.TrimSpace(plain[len(m):])
		}
	}
	return "", plain
}

// decisionText turns a sentence into what it proposes: no acknowledgement,
// "I'd", label or parenthetical, cut to its main clause.
func decisionText(s string) string {
	return mainStatement(withoutAlternative(statement(s)))
}

// withoutAlternative cuts a proposal before the alternative it trails
// ("count on the loaded records, or a counter cache"): what is accepted is
// the first, when it says something on its own.
func withoutAlternative(s string) string {
	if k := strings.Index(s, ", or "); k > 0 && len(tokens(lowerASCII(s[:k]))) >= 3 {
		return s[:k]
	}
	// "Replace it with a real Table — not TableV2": the alternative
	// turned down is no part of the decision.
	if loc := notAlternativeRE.FindStringIndex(s); loc != nil && len(tokens(lowerASCII(s[:loc[0]]))) >= 3 {
		return s[:loc[0]]
	}
	return s
}

// notAlternativeRE ends a sentence with the alternative it does not mean.
var notAlternativeRE = mustPattern(`(?:\s+[—–-]\s+|,\s+)(?:but\s+)?not\s+[^,;—–]{1,40}[.!]?$`)

// mainStatement cuts what statement returned to its main clause when it is
// long, without a leading "Then" or "So".
func mainStatement(s string) string {
	s = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(s, "Then "), "then "))
	s = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(s, "So "), "so "))
	if words(s) <= keepWhole {
		return s
	}
	return mainClause(s)
}

// keepWhole is how many words a proposal may have and still be kept whole:
// its asides ("because existing rows need …") usually say what was agreed.
const keepWhole = 20

// actionable reports whether a proposal's text says what to do rather than
// how things are or what could go wrong.
func actionable(text string) bool {
	lc := lowerASCII(text)
	if imperative(lc) {
		return true
	}
	return !isStatement(lc) && !predicts(lc) && !riskCues.match(lc) && !hedgeRE.MatchString(lc)
}

// predictRE finds "will" or "would" among the first words of a statement,
// after a subject other than "we", "I" or "you".
var predictRE = mustPattern(`^(?:[^\s,;:]+\s+){1,8}?(?:will|would|won't|wouldn't)\b`)

// predicts reports whether lower-cased text says what will happen rather
// than what to do ("integration tests that read the real config will pick
// up …"). What we, I or you will do is a commitment, not a prediction.
func predicts(lc string) bool {
	if hasWordPrefix(lc, "we", "i", "you") {
		return false
	}
	return predictRE.MatchString(lc)
}

// isStatement reports whether lower-cased text states how things are
// rather than what to do: a verb like "is" or "has" among its first seven
// words (before any comma), "that means", or a lead like "there's".
func isStatement(lc string) bool {
	if factLeadRE.MatchString(lc) || strings.Contains(lc, "that means") || codeSubject(lc) {
		return true
	}
	n := 0
	for w := range strings.FieldsSeq(lc) {
		if n == 7 {
			break
		}
		n++
		bare := strings.TrimRight(w, ",;:.")
		if factVerbs[bare] {
			return true
		}
		if len(bare) < len(w) {
			break
		}
	}
	return false
}

// codeSubject reports whether lower-cased text opens with a name from the
// code and a verb that says what it does ("make_params allocates a new
// buffer", "lap(u) returns a new array"): a description, not an
// instruction, since no instruction opens with a code name.
func codeSubject(lc string) bool {
	first, rest, ok := strings.Cut(lc, " ")
	if !ok || !strings.ContainsAny(first, "_(./") {
		return false
	}
	verb, _, _ := strings.Cut(rest, " ")
	return len(verb) > 3 && strings.HasSuffix(verb, "s") && !strings.HasSuffix(verb, "ss")
}

// isFact reports whether a user's clause only states how things are
// ("acme-7 is enterprise"), with no verdict that would make it a choice.
func isFact(lc string) bool {
	if hasWordPrefix(lc, "yes to", "yeah to", "ok to", "okay to") {
		return false // "yes to storing only the userId" accepts what it names
	}
	body := strings.TrimSpace(unleadAck(lc))
	if rest := strings.TrimSpace(unlead(letsRE, body)); rest != body && imperative(rest) {
		return false // "let's make sure the supervisor lives in its own module"
	}
	// "today it is a separate fetch" says how things are, even beside a
	// word that would judge.
	return isStatement(body) && (!evaluation.match(body) || nowRE.MatchString(body)) && !imperative(body) ||
		strings.Contains(body, "whether") || strings.Contains(body, "asked") || reportRE.MatchString(body)
}

// deferRE is a clause that leaves the choice to the assistant's
// recommendation ("go with your recommendation", "do what you suggested",
// "your call"). Every way it matches has "you" in it, which callers check
// first: the pattern is slow to fail.
var deferRE = mustPattern(`\byour (?:recommendation|suggestion|call|pick|choice|proposal)\b|\bwhat you (?:suggested|recommended|proposed|said)\b|\bas you (?:suggested|recommended|proposed|said)\b|\bwhatever you think\b|\bup to you\b|\byou decide\b`)

// recommended returns the proposals of props the assistant recommended in
// prose: for each recommendation, the option it names if it names one
// ("I'd go with the TTL sweep"), else the recommendation itself.
func recommended(t *transcript, props []proposal) []int {
	var out []int
	for k, p := range props {
		if p.item >= 0 || p.option {
			continue
		}
		pick := k
		if o := namedOption(t, props, k); o >= 0 {
			pick = o
		}
		if !slices.Contains(out, pick) {
			out = append(out, pick)
		}
	}
	return out
}

// optionNumberRE finds an option named by its number or letter in the
// assistant's own words ("I'd go with option 2", "go with 2", "pick (b)").
var optionNumberRE = mustPattern(`\b(?:option|approach|choice|number)\s*#?(\d|[a-h])\b|\b(?:go with|pick|take|recommend)\s+\(?(\d|[a-h])\)?(?:\W|$)`)

// advisesAgainstRE finds advice against what a sentence names.
var advisesAgainstRE = mustPattern(`\b(?:avoid|wouldn't|would not|against|rather than|instead of)\b`)

// namedOption returns the option of props that prose proposal k names, by
// number ("I'd go with option 2"), by place ("I recommend the second one")
// or by name ("My pick: Nuke"); -1 when it names none.
func namedOption(t *transcript, props []proposal, k int) int {
	if !slices.ContainsFunc(props, func(p proposal) bool { return p.option }) {
		return -1
	}
	lc := lowerASCII(props[k].body)
	if advisesAgainstRE.MatchString(lc) || isRejection(lowerASCII(statement(props[k].body))) {
		return -1 // "I'd avoid the LRU cap": named, but not recommended
	}
	if m := optionNumberRE.FindStringSubmatch(lc); m != nil {
		for o, p := range props {
			if p.option && p.label != "" && p.label == m[1]+m[2] {
				return o
			}
		}
	}
	for _, o := range ordinalPicks(lc, props) {
		if props[o].option {
			return o
		}
	}
	return echoPick(t, lc, props)
}

// ordinalRE is a reference to an item by its place in a list: "the
// second bullet", "the last option", "the first one". Group 2 is set when
// it names a bullet of a list rather than one of the alternatives.
var ordinalRE = mustPattern(`\b(first|second|third|fourth|fifth|last)\s+(?:(bullet|point|item)|option|one|approach|suggestion|idea)s?\b`)

// ordinalPlace is the index in its list of the item an ordinal names; -1
// is the last.
var ordinalPlace = map[string]int{"first": 0, "second": 1, "third": 2, "fourth": 3, "fifth": 4, "last": -1}

// optionFits and bulletFits say, best first, which list an ordinal means:
// "the second option" one of alternatives, "the second bullet" one of
// unnumbered plan items; failing those, the first list there is.
var (
	optionFits = []func(proposal) bool{
		func(p proposal) bool { return p.option },
		func(proposal) bool { return true },
	}
	bulletFits = []func(proposal) bool{
		func(p proposal) bool { return !p.option && p.label == "" },
		func(p proposal) bool { return p.label == "" },
		func(proposal) bool { return true },
	}
)

// ordinalPicks returns the proposals of props a clause picks by their
// place ("Option 2, and the second bullet too"): a bullet or point is an
// item of the first unnumbered list, an option or "one" an item of the
// first list of alternatives (see optionFits and bulletFits). A clause of
// nothing but places ("go with the second", "first and last", "the first
// two") picks alternatives.
func ordinalPicks(lc string, props []proposal) []int {
	if len(props) == 0 || !strings.Contains(lc, "first") && !strings.Contains(lc, "second") && !strings.Contains(lc, "third") &&
		!strings.Contains(lc, "fourth") && !strings.Contains(lc, "fifth") && !strings.Contains(lc, "last") {
		return nil
	}
	var out []int
	add := func(items []int, n int) {
		if n < 0 {
			n += len(items)
		}
		if n >= 0 && n < len(items) && !slices.Contains(out, items[n]) {
			out = append(out, items[n])
		}
	}
	for _, m := range ordinalRE.FindAllStringSubmatch(lc, -1) {
		fits := optionFits
		if m[2] != "" {
			fits = bulletFits
		}
		add(listItems(props, fits), ordinalPlace[m[1]])
	}
	if len(out) > 0 {
		return out
	}
	ws := strings.FieldsFunc(lc, func(r rune) bool { return r == ' ' || r == ',' || r == '.' || r == '!' })
	for _, w := range ws {
		if _, ok := ordinalPlace[w]; !ok && !placeFill[w] && !pickFill[w] {
			return nil // more than places: "first, add the index"
		}
	}
	items := listItems(props, optionFits)
	for k, w := range ws {
		place, ok := ordinalPlace[w]
		if !ok {
			continue
		}
		count := 1
		if k+1 < len(ws) {
			count = max(1, placeCount[ws[k+1]])
		}
		for c := range count {
			if place < 0 {
				add(items, place-c) // "the last two"
			} else {
				add(items, place+c) // "the first two"
			}
		}
	}
	return out
}

// placeFill are the words a clause that picks by place may have besides
// the places; placeCount the counts after "first" or "last".
var (
	placeFill  = wordSet(`one ones two three`)
	placeCount = map[string]int{"two": 2, "three": 3}
)

// listItems returns the items of the list of props that fits names, best
// first (see optionFits).
func listItems(props []proposal, fits []func(proposal) bool) []int {
	list := -1
	for _, fit := range fits {
		for _, p := range props {
			if (p.item >= 0 || p.option) && fit(p) {
				list = p.list
				break
			}
		}
		if list >= 0 {
			break
		}
	}
	var items []int
	for k, p := range props {
		if (p.item >= 0 || p.option) && p.list == list {
			items = append(items, k)
		}
	}
	return items
}

// namedGroup returns the option list of the option, offered before
// message i, that said names in full (every word of its name), or -1.
func namedGroup(t *transcript, i int, said tokenSet) int {
	for j := previousAssistant(t, i); j >= 0; j = previousAssistant(t, j) {
		for _, p := range t.assistantProposals(j) {
			if p.option && p.name != "" && namesAll(said, p.title) {
				return listGroup(j, p.list)
			}
		}
	}
	return -1
}

// namesAll reports whether set echoes every telling word of title, and
// title has one.
func namesAll(set, title tokenSet) bool {
	n := 0
	for w := range title {
		if len(w) < 3 || genericWords[w] {
			continue
		}
		if !echoes(set, w) {
			return false
		}
		n++
	}
	return n > 0
}

// askYesRE is a closing question of the assistant that offers to do one
// more thing ("Should we also export a metric for misses?", "Want me to
// add a retry too?"); its group is what a "yes" accepts.
var askYesRE = mustPattern(`^(?:should (?:we|i)|shall (?:we|i)|do you want (?:me to|to)|want me to|would you like (?:me to|to)|(?:do you )?want|would you like) (?:also )?(.+?)(?:,? (?:too|as well|also))?\?$`)

// askedToDo returns, as a decision, what the last sentence of assistant
// message prev asks whether to do, or "" when it asks no such thing or
// offers alternatives ("… or …").
func askedToDo(t *transcript, prev int) string {
	if prev < 0 || len(t.sents[prev]) == 0 {
		return ""
	}
	// The last question asks it; a sentence after it may say why ("That
	// would give the editors their moment").
	ss := t.sents[prev]
	k := len(ss) - 1
	for k > 0 && k >= len(ss)-2 && !isQuestion(ss[k].lower) {
		k--
	}
	last := ss[k]
	lc := unlead(askLinkRE, last.lower)
	m := askYesRE.FindStringSubmatch(lc)
	if m == nil || strings.Contains(m[1], " or ") || len(tokens(m[1])) < 3 || hasWordPrefix(m[1], "that", "this", "it", "them", "those") {
		return "" // "Want that as well?" says not what
	}
	return tidy(cutLike(last.plain, m[1]))
}

// askLinkRE opens a question with a word that links it to what came
// before ("Also: do you want …?").
var askLinkRE = mustPattern(`^(?:also|and|one more thing|finally|lastly|last thing)[:,]?\s+`)

// userAskRE is a user's question that proposes what to do ("should we
// also return a Retry-After header?", "can we cache the token?"); its
// group is the proposal.
var userAskRE = mustPattern(`^(?:(?:and|so|also|then|ok|okay)\W+)?(?:should we|shall we|can we|could we|do we want to|would it make sense to|is it worth it to|any reason not to) (?:also |just |still )?(.+?)(?:,? (?:too|as well|also|then))?\?$`)

// confirmRE opens an assistant's reply that agrees with what the user
// just asked or proposed.
var confirmRE = mustPattern(`^(?:yes|yep|yeah|exactly|correct|definitely|absolutely|agreed|good idea|good call|sure|that works|makes sense|right)\b`)

// confirmedAsk returns, as a decision of assistant message i, what the
// user's question just before it proposed when the reply opens by agreeing
// ("partition by created_at and cluster by order_id?" — "Yes, …"), or nil.
func confirmedAsk(t *transcript, i int) *candidate {
	if i == 0 || t.msgs[i-1].Role != agent.RoleUser || len(t.sents[i]) == 0 || len(t.sents[i-1]) == 0 {
		return nil
	}
	if !confirmRE.MatchString(t.sents[i][0].lower) {
		return nil
	}
	last := t.sents[i-1][len(t.sents[i-1])-1]
	lc := strings.TrimSpace(unleadAck(last.lower))
	if !strings.HasSuffix(lc, "?") || isInjection(lc) {
		return nil
	}
	var what string
	if m := userAskRE.FindStringSubmatch(lc); m != nil && imperative(m[1]) {
		what = m[1]
	} else if imperative(lc) {
		what = strings.TrimRight(lc, "? ")
	}
	if what == "" || strings.Contains(what, " or ") || len(tokens(what)) < 3 {
		return nil
	}
	d := &candidate{msg: i, group: -1, subject: newTokenSet(what)}
	d.Content = tidy(cutLike(last.plain, what))
	d.Confidence = 0.75
	d.Sources = []int{i - 1, i}
	return d
}

// exceptRE is a clause that accepts all but one item, by its label ("all
// good except 3", "looks good apart from (b)").
var exceptRE = mustPattern(`^(?:(?:all|everything)(?: else)? (?:good|fine|ok|okay)|(?:looks|sounds) good|lgtm)\s*,?\s*(?:except|but not|apart from|other than) (?:for )?(?:#|item |option |point |step |number )?\(?(\d{1,2}|[a-h])\)?(?:\W|$)`)

// labelledOption returns the option labelled label that the assistant
// offered last before message i.
func labelledOption(t *transcript, i int, label string) (proposal, bool) {
	for j := previousAssistant(t, i); j >= 0; j = previousAssistant(t, j) {
		for _, p := range t.assistantProposals(j) {
			if p.option && p.label == label {
				return p, true
			}
		}
	}
	return proposal{}, false
}

// takeWords are the words before an option's label that pick it ("let's
// do A", "go with your B", "I'll take 2"), when the label ends the clause
// or a sentence ("do a rewrite" has an article, no label).
var takeWords = wordSet(`do take pick choose your with`)

// andRest returns what lower-cased lc takes after its first pick ("Option
// 1, and the conditional update too", "2 + the retry thing"), or "".
func andRest(lc string) string {
	for _, sep := range []string{", and ", " + ", ", plus ", " plus ", " & "} {
		if _, rest, ok := strings.Cut(lc, sep); ok {
			return rest
		}
	}
	return ""
}

// leadLetterRE is a clause that opens with a label and a comma, a colon,
// what the option is for or what else is taken ("b, heartbeat", "(a): the
// replica", "b for dates", "b + the index", "2 + the retry thing").
var leadLetterRE = mustPattern(`^\(?([a-h])\)?(?:[,:]|\s+(?:for|\+|&))\s+(\S+)|^(\d{1,2})\s+(?:[+&]|plus)\s+(\S+)`)

// labelRunRE opens a clause with two or more labels ("1, 2 and 4
// obviously", "(a) and (c), the rest later").
var labelRunRE = mustPattern(`^(?:\(?(?:[a-h]|\d{1,2})\)?(?:\s*,\s*|\s+and\s+|\s*[&+]\s*))+\(?(?:[a-h]|\d{1,2})\)?(?:[\s.,!:]|$)`)
var labelRE = mustPattern(`[a-h]|\d{1,2}`)

// optionPicks returns the labels a clause picks by number or letter
// ("option 2", "1 and 3 too", "(b)"), when the proposals have such labels.
// A number counts after "option" or "approach", or when the clause is
// little else; a number followed by a unit is a quantity ("2 days").
func optionPicks(lc string, props []proposal) []string {
	has := map[string]bool{}
	for _, p := range props {
		if p.label != "" {
			has[p.label] = true
		}
	}
	if len(has) == 0 {
		return nil
	}
	if run := labelRunRE.FindString(lc); run != "" {
		// "1, 2 and 4 obviously": labels, then something about them.
		var out []string
		for _, l := range labelRE.FindAllString(strings.ReplaceAll(run, "and", ""), -1) {
			if !has[l] {
				out = nil
				break
			}
			if !slices.Contains(out, l) {
				out = append(out, l)
			}
		}
		if len(out) > 1 {
			return out
		}
	}
	if m := leadLetterRE.FindStringSubmatch(lc); m != nil {
		l, next := m[1]+m[3], m[2]+m[4]
		if has[l] && !has[strings.Trim(next, "().,")] {
			return []string{l} // "b, heartbeat": the label, then what it is
		}
	}
	if len(lc) > 24 && !strings.ContainsAny(lc, "0123456789(#") && !pickWords.match(lc) {
		return nil // too long to be only letters ("B and C")
	}
	ws := strings.FieldsFunc(lc, func(r rune) bool { return r == ' ' || r == ',' || r == '!' || r == '&' || r == '+' })
	bare := true // only labels and filler words
	for _, w := range ws {
		w = strings.Trim(w, ".()#:")
		if w != "" && !pickFill[w] && !pickWords.match(w) && !has[w] {
			bare = false
			break
		}
	}
	taken := func(k int) bool {
		return k > 0 && takeWords[ws[k-1]] && has[strings.Trim(ws[k], ".!()")] &&
			(k == len(ws)-1 || strings.ContainsAny(ws[k], ".!") || pickFill[ws[k+1]])
	}
	anyTaken := false
	for k := range ws {
		anyTaken = anyTaken || taken(k)
	}
	if !bare && !anyTaken && !strings.ContainsAny(lc, "0123456789(#") && !pickWords.match(lc) {
		return nil
	}
	var out []string
	for k, w := range ws {
		named := k > 0 && pickWords.match(ws[k-1]) || strings.HasPrefix(w, "#") || taken(k)
		l := strings.Trim(w, ".()#:")
		if n := len(l); n >= 2 && n <= 3 && l[n-1] >= 'a' && l[n-1] <= 'h' && has[l[:n-1]] && has[l[n-1:]] {
			// "3b": lettered item b under numbered item 3.
			l, named = l[n-1:], true
		}
		if !has[l] || len(l) != 1 {
			continue
		}
		letter := l[0] >= 'a' && l[0] <= 'h'
		paren := strings.HasPrefix(w, "(") && strings.HasSuffix(strings.TrimRight(w, ".:"), ")")
		switch {
		case named:
		case letter && paren:
		case !letter && bare:
		case letter && bare && len(ws) > 1:
			// "B and C": letters and nothing else name lettered items.
		case letter && len(ws) == 1 && len(strings.TrimRight(lc, ".!)")) == 1:
			// "b.": a sentence of one letter answers a lettered list.
		default:
			continue
		}
		if k+1 < len(ws) && !named && isQuantity(ws[k+1]) && !has[strings.Trim(ws[k+1], ".()#:")] {
			continue
		}
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// notNowRE puts what a clause names off to later work: "not in this
// change", "in a later PR".
var notNowRE = mustPattern(`\bnot (?:in|for|part of) this (?:change|pr|release|sprint|ticket|round)\b|\b(?:in )?a (?:later|follow-?up|separate|future) (?:pr|change|release|ticket)\b`)

// putOff reports whether lower-cased clause lc puts what it names off:
// "Redis later maybe", "not in this change".
func putOff(lc string) bool {
	return strings.Contains(lc, "later") && laterRE.MatchString(lc) || containsAny(lc, " this ", "later", "follow", "separate", "future") && notNowRE.MatchString(lc)
}

// staysRE is a clause that keeps how something is: "full mode stays on".
var staysRE = mustPattern(`\b(?:stays?|remains?) (?:on|off|enabled|disabled|active|as is|as it is|the same|where it is)\b`)

// undoRE is an option's name that turns something off or takes it away:
// "Turn full mode off", "Remove the cache".
var undoRE = mustPattern(`\b(?:off|disable|remove|drop|delete|stop|switch to|replace|move to)\b`)

// siblingPicked reports whether another option of the list that option k
// belongs to is already picked by its label, place or range: "a. keep
// FULL on audit_log" picks (a) and amends it; its words do not pick (b)
// "Keep FULL and add an index". A pick by echo (0.8) may share its list
// with another ("DAU from the rollup. … add FINAL to the rest").
func siblingPicked(props []proposal, picked []float64, k int) bool {
	if !props[k].option {
		return false
	}
	for j, p := range props {
		if j != k && picked[j] >= 0.85 && p.option && p.msg == props[k].msg && p.list == props[k].list {
			return true
		}
	}
	return false
}

// topicPickRE is a terse pick that names a list's topic, then an item's
// label: "rounding 1", "upgrade b, multisig", "dedup: (b)".
var topicPickRE = mustPattern(`^([a-z][a-z-]{2,}):?\s+\(?([a-h]|\d{1,2})\)?(?:[.!]*$|,\s)`)

// topicPick returns the proposal a clause picks by its list's topic and
// its label ("upgrade b" under "Who upgrades:"), or -1.
func topicPick(lc string, props []proposal) int {
	m := topicPickRE.FindStringSubmatch(strings.TrimSpace(unleadAck(lc)))
	if m == nil || pickWords.match(m[1]) {
		return -1 // "option 1, and …": optionPicks reads it
	}
	for k, p := range props {
		if topic := listTopic(props, k); p.label == m[2] && topic != "" && echoes(newTokenSet(topic), m[1]) {
			return k
		}
	}
	return -1
}

// listTopic returns what the list of proposal k is about: the label it
// sits under, or else the name of the item just above the list ("**Who
// upgrades**:" over "- (a) …", "- (b) …").
func listTopic(props []proposal, k int) string {
	if props[k].topic != "" {
		return props[k].topic
	}
	for j := k - 1; j >= 0; j-- {
		if props[j].list != props[k].list {
			return lowerASCII(props[j].name)
		}
	}
	return ""
}

// sharesWord reports whether a and b share a content word of four letters
// or more that says what a thing is ("sweeper", "redis"), not what is done.
func sharesWord(a, b tokenSet) bool {
	for w := range a {
		if _, ok := b[w]; ok && len(w) >= 4 && !genericWords[w] && !imperative(w) {
			return true
		}
	}
	return false
}

// echoItem returns the plan item of props (not an option) whose opening
// words a short clause repeats, or -1 when none or several do.
func echoItem(lc string, props []proposal) int {
	want := newTokenSet(lc)
	best, bestN, tie := -1, 0, false
	for k, p := range props {
		if p.option || p.item < 0 {
			continue
		}
		n := 0 // a word said as it is counts twice one only alike
		for w := range p.title {
			if len(w) >= 3 && !genericWords[w] && echoes(want, w) {
				n++
				if _, ok := want[w]; ok {
					n++
				}
			}
		}
		switch {
		case n > bestN:
			best, bestN, tie = k, n, false
		case n == bestN && n > 0:
			tie = true
		}
	}
	if tie {
		return -1
	}
	return best
}

// enoughSaid reports whether a decision the user worded says enough to
// stand: three content words, two after a verb or a "no" ("use server
// versions", "no global retries"), or one in a clear choice ("let's go with
// HS256", "in-process is fine").
func enoughSaid(content, lc string) bool {
	n := len(tokens(lowerASCII(content)))
	body := strings.TrimSpace(unleadAck(lc))
	switch {
	case n >= 3:
		return true
	case n == 2 && (imperative(body) || strings.HasPrefix(body, "no ")):
		return true
	}
	return n >= 1 && strongShortRE.MatchString(lc)
}

// namedChoiceRE is a clause that names what it chooses outright ("let's
// go with HS256", "DynamoDB it is", "stick with cron", "we should use
// Redis").
var namedChoiceRE = mustPattern(`\bgo(?:ing)? with\b|\bit is\b|\bstick(?:ing)? with\b|\b(?:let'?s|we'll|we will|we should) (?:just )?(?:use|pick|keep)\b`)

// verdictEndRE ends a clause that passes a verdict on its subject ("cost
// is fine", "the delay is acceptable").
var verdictEndRE = mustPattern(`\b(?:is|are) (?:fine|ok|okay|good|acceptable|enough|right)$`)

// saysWhat reports whether a decision that only the user's words make
// says what was decided: three content words or more, an instruction or a
// refusal ("use server versions", "no global retries"), a choice named
// outright ("let's go with HS256"), or one of the alternatives assistant
// message prev offered ("Redis or in-process?" — "in-process is fine").
// "Days is fine" or "Let's do the queue route" answer the assistant but,
// standing alone, tell a reader of the handoff neither what nor how.
func saysWhat(t *transcript, prev int, content, lc string) bool {
	// "RAM is fine, we have 3 pods": the verdict is about one word; what
	// follows the comma is the reason, not what was decided (unless it
	// says what to do: "HMAC is fine, do that instead").
	if head, rest, ok := strings.Cut(content, ", "); ok && verdictEndRE.MatchString(lowerASCII(head)) &&
		!imperative(lowerASCII(rest)) && !acceptCuesAny.match(lowerASCII(rest)) {
		content = head
	}
	ws := tokens(lowerASCII(content))
	body := strings.TrimSpace(unleadAck(lc))
	if len(ws) >= 3 || imperative(body) || strings.HasPrefix(body, "no ") || namedChoiceRE.MatchString(lc) {
		return true
	}
	if prev < 0 || len(ws) == 0 {
		return false
	}
	want := newTokenSet(lowerASCII(content))
	for _, s := range t.sents[prev] {
		if strings.Contains(s.lower, " or ") && looseOverlap(want, t.wordsOf(s)) == len(want) {
			return true
		}
	}
	return false
}

// namesOffer reports whether a decision in the user's words says enough
// to stand on its own: two content words or more, or one that assistant
// message prev put forward ("In-process is fine" after "Redis or
// in-process"). One word of the user's own ("The skew is fine", "Days")
// names a subject, not what was decided about it, unless chosen outright
// ("Let's go with HS256"), which the caller checks.
func namesOffer(t *transcript, prev int, content string) bool {
	ws := tokens(lowerASCII(content))
	if len(ws) != 1 {
		return len(ws) > 1
	}
	if prev < 0 {
		return false
	}
	for _, s := range t.sents[prev] {
		if echoes(t.wordsOf(s), ws[0]) {
			return true
		}
	}
	return false
}

// choiceQuestionRE is a question that offers alternatives: "Should this
// apply to every route or just search?", "One array or JSON Lines?". It
// captures the stem before the first alternative is unknown, so the caller
// splits at " or ".
var choiceQuestionRE = mustPattern(`^(?:(?:and|so|also|then)\s+)?(?:should|do you want|would you (?:rather|prefer)|shall|is it|are they|does it)\b.*\s+or\s+[^?]+\?$`)

// askLeadRE is what a choice question opens with before its proposition.
var askLeadRE = mustPattern(`^(?:(?:and|so|also|then)\s+)?(?:should|do you want|would you (?:rather|prefer)|shall|is it|are they|does it)\s+(?:(?:we|i|this|that|it|they|you|the [a-z_-]+)\s+)?(?:to\s+)?`)

// choiceAnswer reads a terse answer to a question of the assistant that
// offered alternatives ("Should this apply to every route or just
// search?" — "just /v1/search for now"): the decision is the question's
// proposition with the alternative the user named ("Apply to just
// /v1/search for now"). The answer must name one of the alternatives.
func choiceAnswer(t *transcript, i, prev int, c, lc string) *candidate {
	if prev < 0 || words(lc) > 6 || isQuestion(lc) || isRejection(lc) {
		return nil
	}
	ss := t.sents[prev]
	want := newTokenSet(lc)
	if len(want) == 0 {
		return nil
	}
	for k := len(ss) - 1; k >= 0 && k >= len(ss)-2; k-- {
		q := ss[k].lower
		if ss[k].bullet {
			continue
		}
		if !choiceQuestionRE.MatchString(q) {
			// "Fail closed (503) or fail open (serve and log it)?" —
			// "fail open, log a warning": an answer that opens with one
			// of two bare alternatives says the decision.
			if d := bareAltAnswer(dropParens(q), i, prev, c, lc); d != nil {
				return d
			}
			continue
		}
		head, alt, _ := strings.Cut(strings.TrimSuffix(q, "?"), " or ")
		hw := strings.Fields(strings.TrimSpace(unlead(askLeadRE, head)))
		n := len(strings.Fields(alt))
		if n >= len(hw) {
			continue // no proposition left before the alternatives
		}
		first := strings.Join(hw[len(hw)-n:], " ")
		if looseOverlap(want, newTokenSet(alt)) == 0 && looseOverlap(want, newTokenSet(first)) == 0 {
			continue
		}
		stem := strings.Join(hw[:len(hw)-n], " ")
		if strings.HasSuffix(stem, " be") {
			stem = strings.TrimSuffix(stem, " be") + ":"
		}
		answer := strings.TrimRight(strings.TrimSpace(c), ".!")
		d := &candidate{msg: i, group: -1, subject: want}
		d.Content = tidy(stem + " " + answer)
		d.Confidence = 0.6
		d.Sources = []int{prev, i}
		return d
	}
	return nil
}

// bareAltRE is a question of two short alternatives and nothing else:
// "fail closed or fail open?".
var bareAltRE = mustPattern(`^((?:[\w'-]+ ){0,3}[\w'-]+) or ((?:[\w'-]+ ){0,3}[\w'-]+)\?$`)

// bareAltAnswer returns the decision of answer c (lower-cased lc) of user
// message i to question q of message prev, when q offers two bare
// alternatives and the answer opens with one of them; nil otherwise.
func bareAltAnswer(q string, i, prev int, c, lc string) *candidate {
	m := bareAltRE.FindStringSubmatch(q)
	if m == nil || len(tokens(lc)) < 2 || !hasWordPrefix(lc, m[1]) && !hasWordPrefix(lc, m[2]) {
		return nil
	}
	d := &candidate{msg: i, group: -1, subject: newTokenSet(lc)}
	d.Content, d.Confidence, d.Sources = tidy(strings.TrimRight(strings.TrimSpace(c), ".!")), 0.6, []int{prev, i}
	return d
}

// labelledAnswer reads a user's answer given under a label that names
// what the assistant just asked about ("Parse errors: fatal for --config,
// warn-and-skip for discovered files"): the clause is the decision.
func labelledAnswer(t *transcript, i, prev int, c, lc string) *candidate {
	m := labelLead(lc)
	if prev < 0 || m == "" || !isLabel(c[:len(m)]) || len(tokens(lc[len(m):])) < 2 || isRejection(lc) {
		return nil
	}
	if rest := strings.TrimSpace(lc[len(m):]); weAreRE.MatchString(rest) || reportRE.MatchString(rest) || nowRE.MatchString(lc) {
		// "Invoices: we're a German company", "Identity today: honestly
		// nothing": how things are, under the label asked about.
		return nil
	}
	label := newTokenSet(m)
	if len(label) == 0 {
		return nil
	}
	asked := false
	for _, s := range t.sents[prev] {
		if looseOverlap(label, t.wordsOf(s)) == len(label) {
			asked = true
			break
		}
	}
	if !asked {
		return nil
	}
	d := &candidate{msg: i, group: -1, subject: newTokenSet(lc)}
	d.Content = tidy(withoutReason(strings.TrimRight(c, ".!")))
	d.Confidence = 0.6
	d.Sources = []int{prev, i}
	return d
}

// nowRE finds words that place a statement in the present: how things
// are, not what will be done.
var nowRE = mustPattern(`\b(?:today|right now|currently|at the moment|as of now|these days)\b`)

// weAreRE opens a statement about the speaker's team or setup.
var weAreRE = mustPattern(`^(?:we're|we are|we have|we've got|i'm|i am|i have|i talked|i spoke|i asked)\b`)

// factQuestion returns the question, lower-cased, when assistant message
// j ends by asking how things are (without offering alternatives) rather
// than what to do; "" otherwise.
func factQuestion(t *transcript, j int) string {
	if j < 0 {
		return ""
	}
	ss := t.sents[j]
	for k := len(ss) - 1; k >= 0 && k >= len(ss)-2; k-- {
		if isQuestion(ss[k].lower) {
			q := ss[k].lower
			if factTagRE.MatchString(q) {
				return q // "the team looks at same-day numbers, I assume?"
			}
			if l := labelLead(q); l != "" {
				q = q[len(l):] // "Two questions decide it: do you use …?"
			}
			// "Do you use SV packages or interfaces?" asks what there is;
			// "Is it X or Y?" asks which to take.
			if factQuestionRE.MatchString(q) && (!strings.Contains(q, " or ") || usesRE.MatchString(q)) && !strings.HasPrefix(q, "do you want") && !strings.HasPrefix(q, "should") {
				return q
			}
			return ""
		}
	}
	return ""
}

// factQuestions returns, lower-cased, the sentences of assistant message
// j that ask how things are, wherever the question starts in them: "I
// need to see how the result is shown — do you call reloadData() after
// applying it?".
func factQuestions(t *transcript, j int) []string {
	if j < 0 {
		return nil
	}
	var qs []string
	for _, s := range t.sents[j] {
		q := s.lower
		if !isQuestion(q) {
			continue
		}
		if i := strings.LastIndexAny(q, "—:;"); i >= 0 {
			_, w := utf8.DecodeRuneInString(q[i:])
			q = strings.TrimSpace(q[i+w:])
		}
		if factQuestionRE.MatchString(q) && !strings.Contains(q, " or ") && !strings.HasPrefix(q, "do you want") {
			qs = append(qs, s.lower) // its words, with what leads to it
		}
	}
	return qs
}

// answersAnyFact reports whether lower-cased clause lc answers yes or no
// to one of the questions qs, by two of its words: "yes, we call
// reloadData after the coupon" to "do you call reloadData() after applying
// it?".
func answersAnyFact(lc string, qs []string) bool {
	if len(qs) == 0 || !answerLeadRE.MatchString(lc) || explicitChoiceRE.MatchString(lc) {
		return false
	}
	said := newTokenSet(lc)
	for _, q := range qs {
		n := 0
		for w := range newTokenSet(strings.ReplaceAll(q, ".", " ")) { // tableview.reloaddata() says reloaddata
			if _, ok := said[w]; ok && len(w) >= 3 && !genericWords[w] {
				n++
			}
		}
		if n >= 2 {
			return true
		}
	}
	return false
}

// answersFact reports whether lower-cased clause lc answers the question
// q about how things are: "yes, split deliveries happen", or "packages
// yes" to "do you use SV packages or interfaces?" ("build cache yes"
// to "do any tests need services?" takes up what was proposed).
func answersFact(lc, q string) bool {
	if q == "" {
		return false
	}
	if answerLeadRE.MatchString(lc) {
		return !explicitChoiceRE.MatchString(lc)
	}
	if !strings.Contains(lc, " yes") && !strings.Contains(lc, " no") {
		return false // the quick test nameYesRE needs
	}
	m := nameYesRE.FindStringSubmatch(lc)
	return m != nil && namesAll(newTokenSet(q), newTokenSet(m[1])) && !explicitChoiceRE.MatchString(lc)
}

// factTagRE is a statement turned into a question by a tag ("…, I
// assume?", "…, right?"): it asks to confirm how things are.
var factTagRE = mustPattern(`,\s*(?:i assume|i presume|i guess|i take it|i suppose|right|correct|yes|true)\?\s*$`)

// reportedWishRE is a clause that reports what someone else would
// choose: "He wants your option 2", "my lead prefers Redis".
var reportedWishRE = mustPattern(`^(?:but |and |so )?(?:he|she|they|(?:my|our) (?:colleague|boss|manager|lead|cto|pm|po|team ?lead|tech lead|architect|client|customer)) (?:wants|want|prefers|prefer|suggests|suggest|would like|would prefer|asked for|asks for)\b`)

// reportedAskRE finds a question reported rather than asked.
var reportedAskRE = mustPattern(`\b(?:whether|asked if|asks if|wondering if|wonders if)\b`)

// rangeRE is a range of item numbers ("1-4", "2 to 5") or the first or
// all items of a list by their count ("all 5", "first two"); rangeTail is what may follow it
// when it counts items rather than quantities ("1-4 from the power list",
// not "2-3 days").
var (
	rangeRE   = mustPattern(`(?:^|[^\w.])(?:(\d{1,2})\s*(?:-|–|to|through)\s*(\d{1,2})|(?:all|first|the first|top) (\d{1,2}|two|three|four|five|six))\b`)
	rangeTail = mustPattern(`^(?:\s*$|\s*[,.;!:]|\s+(?:from|of|in|on|and|too|please|then|also|but|except|not|yes|for|are|is)\b)`)
)

// rangePicks returns the numbered items of props a clause takes by range:
// from the one list that has every number of the range, or, when several
// have, from the one whose label the clause names ("the power list"), else
// the last of them.
func rangePicks(lc string, props []proposal) []int {
	if !strings.ContainsAny(lc, "0123456789") && !containsAny(lc, " two", " three", " four", " five", " six") ||
		!strings.ContainsAny(lc, "-–") && !containsAny(lc, " to ", "through", "all ", "first ", "top ") {
		return nil
	}
	loc := rangeRE.FindStringSubmatchIndex(lc)
	if loc == nil || !rangeTail.MatchString(lc[loc[1]:]) {
		return nil
	}
	from, to := 1, 0
	if loc[6] >= 0 {
		to = numberWord(lc[loc[6]:loc[7]])
	} else {
		from, _ = strconv.Atoi(lc[loc[2]:loc[3]])
		to, _ = strconv.Atoi(lc[loc[4]:loc[5]])
	}
	if from < 1 || to <= from || to > 20 {
		return nil
	}
	said := newTokenSet(lc)
	best, bestNamed := -1, false
	for _, p := range props {
		if p.label != strconv.Itoa(to) {
			continue
		}
		hasFrom := false
		for _, q := range props {
			hasFrom = hasFrom || q.list == p.list && q.label == strconv.Itoa(from)
		}
		if !hasFrom {
			continue
		}
		switch named := p.topic != "" && sharesWord(newTokenSet(p.topic), said); {
		case named && !bestNamed:
			best, bestNamed = p.list, true
		case !bestNamed:
			best = p.list // the later list, when none is named
		}
	}
	if best < 0 {
		return nil
	}
	var out []int
	for k, p := range props {
		if n, err := strconv.Atoi(p.label); err == nil && p.list == best && n >= from && n <= to {
			out = append(out, k)
		}
	}
	return out
}

// numberWord returns the number w says in digits or as a word from two to
// six, or 0.
func numberWord(w string) int {
	if n, err := strconv.Atoi(w); err == nil {
		return n
	}
	if k := slices.Index(numberWords, w); k >= 0 {
		return k + 2
	}
	return 0
}

// numberWords are the counts a clause may say in words ("all three").
var numberWords = []string{"two", "three", "four", "five", "six"}

// isQuantity reports whether the text after a bare number makes it a
// quantity ("2 days", "3x") rather than an option's number ("2 and 3").
func isQuantity(after string) bool {
	after = strings.TrimLeft(after, " ")
	if after == "" || !unicode.IsLetter(rune(after[0])) && after[0] != '%' && after[0] != '.' {
		return false
	}
	w, _, _ := strings.Cut(after, " ")
	w = strings.TrimRight(w, ",.!")
	return !pickFill[w]
}

// pickFill are the words that may stand around an option's number
// ("2 and 3 too", "I'll take 2", "1 and 4 for now").
var pickFill = wordSet(`and or yes yep too also then is are sounds looks for it please plus with but ok okay sure it's both take pick i'll we'll let's go the now fine good first right do`)

// echoPick returns the option of props whose name a short clause repeats
// ("nuke", "dedup table then"), or -1.
func echoPick(t *transcript, lc string, props []proposal) int {
	if words(lc) > 14 {
		return -1
	}
	want := newTokenSet(lc)
	best, bestN, bestExact := -1, 0, 0
	tie := false
	for k, p := range props {
		if !p.option || len(p.title) == 0 {
			continue
		}
		n, exact := 0, 0
		for w := range p.title {
			if len(w) < 3 || !echoes(want, w) {
				continue
			}
			// A word every option's name has ("cache") does not pick one.
			shared := false
			for k2, o := range props {
				if k2 != k && o.option && o.msg == p.msg {
					if _, ok := o.title[w]; ok {
						shared = true
					}
				}
			}
			if !shared {
				n++
				if echoesWhole(want, w) {
					exact++
				}
			}
		}
		// Of two names echoed as much, the one echoed by whole words
		// wins ("build-logic" names "an included build", not "buildSrc"),
		// then the one the clause says more of: "tenant by tenant" names
		// "Tenant by tenant", not "Hand-rolled Current.tenant plus
		// explicit where(tenant_id)".
		if n > bestN || n == bestN && n > 0 && (exact > bestExact || exact == bestExact && len(p.title) < len(props[best].title)) {
			tie = n == bestN && exact == bestExact
			best, bestN, bestExact = k, n, exact
		} else if n == bestN && n > 0 && exact == bestExact {
			tie = true
		}
	}
	// In a longer clause one shared word is chance, not an echo.
	if bestN*3 < len(want) || tie && bestN == 1 {
		return -1
	}
	return best
}

// takesInstead reports whether lower-cased pick, said in message i after a
// refusal, takes an option in its place, offered last or before ("no Redis,
// go with the TTL sweep", "forget the cached count and go with
// simplePaginate()"), and is no second refusal ("no scanning, I don't want
// arbitrary imports").
func takesInstead(t *transcript, i, prev int, pick string, props []proposal) bool {
	pick = strings.TrimPrefix(strings.TrimPrefix(pick, "and "), "but ")
	if rejectRE.MatchString(pick) || isRejection(pick) || rejectCues.match(pick) {
		return false
	}
	return echoPick(t, pick, props) >= 0 || earlierPick(t, i, prev, pick, props, false) != nil
}

// andTakeRE joins a refusal to the pick that replaces it: "forget the
// cached count and go with …".
var andTakeRE = mustPattern(` and (?:(?:let'?s|we'll|i'll|just) )?(?:do|go with|take|use|switch to|stick with)\b`)

// takeLeadRE opens a clause that takes what it names ("do the cache and
// the index", "let's go with both").
var takeLeadRE = mustPattern(`^(?:(?:let'?s|we'll|i'll|please) )?(?:do|go with|take|add|keep)\b\s*`)

// pickJoinRE separates the names of options picked together ("client
// authority + interpolation", "dedup table and the sweeper").
var pickJoinRE = mustPattern(`\s+(?:\+|&|and|plus)\s+|,\s+`)

// echoPicks returns the options of props a short clause picks together by
// naming each ("A + B", "A and B"): each part of the clause echoes a
// different option. Fewer than two such parts pick nothing here.
func echoPicks(t *transcript, lc string, props []proposal) []int {
	if words(lc) > 14 || !strings.ContainsAny(lc, "+&,") && !strings.Contains(lc, " and ") && !strings.Contains(lc, " plus ") {
		return nil
	}
	var out []int
	for _, part := range pickJoinRE.Split(lc, -1) {
		k := echoPick(t, part, props)
		if k < 0 {
			return nil // a part that names no option: not a list of picks
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// echoItems returns the plan items of props a short clause names
// together ("the sweeper and the gauge"): each part echoes a different
// item. Fewer than two such parts name nothing here.
func echoItems(lc string, props []proposal) []int {
	if words(lc) > 10 || !strings.ContainsAny(lc, "+&,") && !strings.Contains(lc, " and ") && !strings.Contains(lc, " plus ") {
		return nil
	}
	// "yes, do the sparsity thing and the solver": the items come after
	// the yes and the verb that takes them.
	lc = strings.TrimSpace(unleadAck(lc))
	lc = strings.TrimSpace(unlead(takeLeadRE, lc))
	var out []int
	for _, part := range pickJoinRE.Split(lc, -1) {
		k := echoItem(part, props)
		if k < 0 {
			return nil // a part that names no item: not a list of picks
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// echoProse returns the recommendation in prose of props (no list item,
// no option) that a short clause accepts by a word only it has ("yes
// migrate" after "… unless we migrate it: copy it over on first load"),
// or -1 when none or several have the clause's words.
func echoProse(lc string, props []proposal) int {
	return echoUnique(lc, props, func(p *proposal) bool { return p.item < 0 && !p.option && p.decision() != "" })
}

// echoUnique returns the one proposal of props that fits and has a
// distinctive word of a short clause in what it says, or -1 when none or
// several do.
func echoUnique(lc string, props []proposal, fits func(*proposal) bool) int {
	best := -1
	for w := range newTokenSet(lc) {
		if len(w) < 4 || pickFill[w] || yesCues.match(w) || pointerWords[w] || genericWords[w] || pickWords.match(w) {
			continue
		}
		for k := range props {
			if _, ok := props[k].set[w]; !ok || !fits(&props[k]) {
				continue
			}
			if best >= 0 && best != k {
				return -1
			}
			best = k
		}
	}
	return best
}

// echoes reports whether set has word w, alike up to hyphens ("subpaths"
// for "sub-path") or sharing its first five letters ("virtualize" for
// "virtualization").
func echoes(set tokenSet, w string) bool {
	if _, ok := set[w]; ok {
		return true
	}
	// "create/update": either word, when it is no path.
	if a, b, ok := strings.Cut(w, "/"); ok && a != "" && b != "" && !strings.Contains(b, "/") && !strings.Contains(w, ".") {
		return echoes(set, a) || echoes(set, b)
	}
	bare := w
	if strings.Contains(w, "-") {
		bare = strings.ReplaceAll(w, "-", "")
	}
	for v := range set {
		if strings.Contains(v, "-") {
			v = strings.ReplaceAll(v, "-", "")
		}
		if v == bare || len(v) >= 5 && len(bare) >= 5 && v[:5] == bare[:5] {
			return true
		}
	}
	return false
}

// echoesWhole reports whether set has word w itself, or as a part of a
// hyphenated word ("build" in "build-logic").
func echoesWhole(set tokenSet, w string) bool {
	if _, ok := set[w]; ok {
		return true
	}
	for v := range set {
		if strings.Contains(v, "-") && slices.Contains(strings.Split(v, "-"), w) {
			return true
		}
	}
	return false
}

// earlierPick returns the option of an earlier assistant message (one of
// the three before prev) that a short clause picks by number or name, as a
// candidate that replaces other picks from the same list; nil if none, or
// if props, the proposals of prev, offer options of their own.
func earlierPick(t *transcript, i, prev int, lc string, props []proposal, byBody bool) *candidate {
	lc = pickCore(lc)
	if words(lc) > 3 {
		return nil
	}
	for _, p := range props {
		if p.option {
			return nil // prev offers its own options: a pick is from those
		}
	}
	seen := 0
	for j := prev - 1; j >= 0 && seen < 5; j-- {
		if t.msgs[j].Role != agent.RoleAssistant {
			continue
		}
		seen++
		props := t.assistantProposals(j)
		k := -1
		if labels := optionPicks(lc, props); len(labels) > 0 && (strings.Contains(lc, "option") || strings.Contains(lc, "approach") || parenLabelRE.MatchString(lc)) {
			for n, p := range props {
				// A letter in parentheses names an option even where the
				// list read as a plan: "(a) … (b) … (c) …".
				if p.label == labels[0] && (p.option || isLetter(p.label) && parenLabelRE.MatchString(lc)) {
					k = n
					break
				}
			}
		}
		if k < 0 {
			k = echoPick(t, lc, props)
		}
		if k < 0 && byBody {
			k = echoOptionBody(lc, props)
		}
		if k < 0 {
			continue
		}
		p := &props[k]
		text := p.decision()
		if text == "" {
			return nil
		}
		d := &candidate{msg: i, group: listGroup(j, p.list), subject: p.set}
		d.Content = text
		d.Confidence = 0.75
		d.Sources = []int{j, i}
		return d
	}
	return nil
}

// perListPicks reads labels given to a reply with as many lists of
// options as labels, each list holding them all, as one pick per list in
// order: "ok 1 and 2" to "**Completion** 1. … 2. … **Man pages** 1. …
// 2. …" picks completion 1 and man pages 2; two options of one list are
// alternatives. It returns the picked proposals, or nil.
func perListPicks(labels []string, props []proposal) []int {
	if len(labels) < 2 {
		return nil
	}
	var lists []int
	for _, p := range props {
		if p.label != "" && !slices.Contains(lists, p.list) {
			lists = append(lists, p.list)
		}
	}
	if len(lists) != len(labels) {
		return nil
	}
	var out []int
	for n, list := range lists {
		for _, l := range labels {
			if !slices.ContainsFunc(props, func(p proposal) bool { return p.list == list && p.label == l }) {
				return nil // a label the list lacks: the labels are not shared
			}
		}
		out = append(out, slices.IndexFunc(props, func(p proposal) bool { return p.list == list && p.label == labels[n] }))
	}
	return out
}

// tagQuestionRE ends a statement with a question that only asks to confirm
// it: "…, right?", "…, no?".
var tagQuestionRE = mustPattern(`, (?:right|no|correct|yes|isn't it|doesn't it)\?\s*$`)

// summariseRE asks for a summary outright: "Can you summarise everything
// with the files?", "recap please". A "summary" can be something else
// ("the alert summary").
var summariseRE = mustPattern(`\b(?:summari[sz]e|recap|sum (?:it |this |that )?up|write (?:it |this |that )?up)\b`)

// pickCore returns what lower-cased lc picks: "go with your (b), the
// split" picks "(b)".
func pickCore(lc string) string {
	lc = strings.TrimSpace(unlead(takeRE, lc))
	if head, _, ok := strings.Cut(lc, ", the "); ok && parenLabelRE.MatchString(head) {
		return head
	}
	return lc
}

// takeRE opens a pick: "go with", "switch to your".
var takeRE = mustPattern(`^(?:(?:let'?s|we'll|i'll)\s+)?(?:go with|go for|switch to|stick with|take)\s+(?:your\s+|the\s+)?`)

// parenLabelRE is an option's label in parentheses: "(b)", "your (ii)".
var parenLabelRE = mustPattern(`^(?:your\s+)?\((?:[a-h]|[ivx]{1,4}|\d)\)$`)

// echoOptionBody returns the option of props that alone has a word of a
// short clause in what it says, not only in its name ("the JObject thing"
// for "Untyped JSON tree: load into a JObject"), or -1.
func echoOptionBody(lc string, props []proposal) int {
	return echoUnique(lc, props, func(p *proposal) bool { return p.option })
}

// refusedObjectRE is a clause that turns down something by name: "drop
// fetch", "ok, skip the sweeper thing".
var refusedObjectRE = mustPattern(`^(?:(?:yeah|yes|ok|okay|so|and|then|actually|hm+)\W+)*(?:drop|skip|forget|scrap|ditch|remove|kill|no|not)\s+(?:the\s+)?([a-z0-9_./+-]+(?:\s+[a-z0-9_./+-]+){0,2}?)(?:\s+(?:thing|idea|part|bit))?\s*(?:[,.;!]|\s+and\s+(?:use|go|do|take|keep|switch|move|put)\b|$)`)

// refusedObject returns the name of what a clause turns down, lower-cased,
// or "" when it turns down nothing by name.
func refusedObject(lc string) string {
	if !containsAny(lc, "drop ", "skip ", "forget ", "scrap ", "ditch ", "remove ", "kill ", "no ", "not ") {
		return ""
	}
	m := refusedObjectRE.FindStringSubmatch(lc)
	if m == nil || len(m[1]) < 4 || pointerWords[m[1]] || genericWords[m[1]] {
		return ""
	}
	return m[1]
}

// refusedItem returns the one item of props whose words hold all of what
// a refusal turns down by name ("skip the dashboard"), or -1 when none or
// several do.
func refusedItem(refusal string, props []proposal) int {
	obj := refusedObject(refusal)
	if obj == "" {
		return -1
	}
	want := newTokenSet(obj)
	found := -1
	for k, p := range props {
		if p.item >= 0 && looseOverlap(want, p.set) == len(want) {
			if found >= 0 {
				return -1
			}
			found = k
		}
	}
	return found
}

// dropObjRE opens an instruction to drop something by name: "Drop
// `resourceLimits` and the version bump".
var dropObjRE = mustPattern("^(?:so |then |just |and )?(?:drop|remove)\\s+(?:the\\s+)?`?([a-z0-9_.-]{3,})")

// takeBack removes the decisions of user messages before message i that
// the user made in words naming obj ("yes do fetch", later "drop fetch").
func takeBack(t *transcript, cands []*candidate, i int, obj string) {
	objSet := newTokenSet(obj)
	said := map[int]bool{} // user messages before i that name obj
	for _, c := range cands {
		if c.removed || c.msg >= i {
			continue
		}
		for _, m := range c.Sources {
			if m >= i || t.msgs[m].Role != agent.RoleUser {
				continue
			}
			names, ok := said[m]
			if !ok {
				lc := t.lowerMsg(m)
				// "silent background install sounds good", later "scrap
				// silent install": every word of obj, not only the phrase.
				names = namesWords(lc, obj) || len(objSet) >= 2 && looseOverlap(objSet, newTokenSet(lc)) == len(objSet)
				said[m] = names
			}
			if names && looseOverlap(objSet, c.subject) > 0 {
				c.removed = true
				break
			}
		}
		if !c.removed && c.group >= 0 && len(objSet) >= 2 && looseOverlap(spelledOut(objSet), newTokenSet(lowerASCII(c.Content))) == len(objSet) {
			// "(a)", later "so no db secrets engine": the option picked by
			// its label, taken back by its words.
			c.removed = true
		}
	}
}

// shortForms are words people shorten past what looseOverlap's prefixes
// match ("db" for "database").
var shortForms = map[string]string{"db": "database", "env": "environment", "deps": "dependenc", "k8s": "kubernete"}

// spelledOut returns set with its short forms written out.
func spelledOut(set tokenSet) tokenSet {
	out := make(tokenSet, len(set))
	for w := range set {
		if long, ok := shortForms[w]; ok {
			w = long
		}
		out[w] = struct{}{}
	}
	return out
}

// namesWords reports whether lower-cased text has phrase as whole words.
func namesWords(text, phrase string) bool {
	for off := 0; ; {
		k := strings.Index(text[off:], phrase)
		if k < 0 {
			return false
		}
		k += off
		if (k == 0 || !isWordByte(text[k-1])) && (k+len(phrase) == len(text) || !isWordByte(text[k+len(phrase)])) {
			return true
		}
		off = k + 1
	}
}

// reversalPick is earlierPick for a clause that changes course.
func reversalPick(t *transcript, i, prev int, lc string, props []proposal) *candidate {
	if !reversalCues.match(lc) {
		return nil
	}
	core := reversalCore(lc)
	if turnsDown(core) {
		return nil // "so scratch that bucket": it turns down, it picks nothing
	}
	return earlierPick(t, i, prev, core, props, true)
}

// turnsDown reports whether lower-cased lc opens by turning something
// down ("scratch the merge", "no heartbeat"); "drop to one NAT gateway"
// lowers a number.
func turnsDown(lc string) bool {
	return hasWordPrefix(lc, "scratch", "scrap", "forget", "drop", "ditch", "skip", "no", "not") && !hasWordPrefix(lc, "drop to", "drop down")
}

// reversalCore returns what a clause that changes course names: without
// "let's do", "after all" or "instead", and before ", but …".
func reversalCore(lc string) string {
	head, _, _ := strings.Cut(lc, ", but ")
	head = strings.TrimSpace(unlead(letsRE, strings.TrimSpace(unleadAck(head))))
	head = strings.TrimRight(head, ".! ")
	for _, tail := range []string{" after all", " instead"} {
		// "the big-bang after all, one branch": what follows the cue
		// says more about the choice; the choice comes before it.
		if k := strings.Index(head, tail); k > 0 && (k+len(tail) == len(head) || head[k+len(tail)] == ',') {
			head = head[:k]
		}
	}
	return head
}

// acceptFirstWords are the words a clause of acceptRE can open with.
var acceptFirstWords = wordSet(`ok okay k yes yep yeah yup sure fine good great perfect agreed agree exactly
	correct right cool nice lgtm sounds looks makes do go ship let's lets that works acceptable all that's
	both on thanks thank handle deal done please approved alright sgtm proceed the this plan rest
	continue carry everything`)

// mayAccept reports whether lower-cased lc opens with a word acceptRE's
// phrases open with, or with a sign it accepts: only then can it match.
func mayAccept(lc string) bool {
	w := leadWord(lc)
	return w == "" || acceptFirstWords[w]
}

// isPureAcceptance reports whether a clause says yes and nothing more.
func isPureAcceptance(lc string) bool {
	if words(lc) > 12 {
		return false // longer than any run of acceptRE's phrases a person writes
	}
	lc = strings.TrimSpace(strings.TrimRight(lc, ".!"))
	if mayAccept(lc) && acceptRE.MatchString(lc) {
		return true
	}
	if words(lc) <= 6 && acceptCuesAny.match(lc) && !optionRefRE.MatchString(lc) {
		// "go with (a)" names an option: it is a pick, not a yes.
		rest := strings.TrimSpace(unleadAck(lc))
		rest = strings.TrimSpace(untrail(rest))
		return len(tokens(rest)) == 0 || acceptRE.MatchString(rest)
	}
	return false
}

// rejection is a proposal turned down in message msg.
type rejection struct {
	msg int
	set tokenSet
}

// findDecisions reads the dialogue: what each user message accepts,
// rejects and reverses of the proposals before it, and what it decides in
// its own words.
func findDecisions(t *transcript) []agent.ExtractedDecision {
	var cands []*candidate
	var rejections []rejection
	answered := make([]bool, len(t.msgs)) // assistant messages the user replied to with a choice
	for i, m := range t.msgs {
		if m.Role != agent.RoleUser {
			// A recap restates decisions once the user has agreed to
			// something, or when they asked for it.
			if len(cands) > 0 || userAsked(t, i, summariseRE) {
				cands = append(cands, recapDecisions(t, i)...)
			}
			if d := confirmedAsk(t, i); d != nil {
				cands = append(cands, d)
			}
			continue
		}
		prev := previousAssistant(t, i)
		props := t.assistantProposals(prev)
		factQ, factQs := factQuestion(t, prev), factQuestions(t, prev)
		picked := make([]float64, len(props)) // confidence of a pick, 0: none
		turnedDown := make([]bool, len(props))
		general := false
		reversal := false
		var against []tokenSet
		said := ""    // the last statement of the message, for "memoize it"
		refused := "" // the last clause of the message that refuses something
		before := len(cands)
		lonePick := loneLabelledItem(t.sents[i])
		lastPicked, lastBefore, lastGeneral := slices.Clone(picked), before, general // as the sentence before began
		for _, s := range t.sents[i] {
			if s.idx == 0 && wrongTurnRE.MatchString(s.lower) {
				// "Wait, no. I ran this past Priya …": what the user
				// decided last is taken back.
				retract(cands, i, before)
				continue
			}
			if s.idx > 0 && selfCorrectRE.MatchString(s.lower) {
				// "DAU from the rollup. Let's do (c)… actually no, ops owns
				// that file": the sentence before is taken back.
				copy(picked, lastPicked)
				for _, c := range cands[lastBefore:] {
					c.removed = true
				}
				general = lastGeneral
			}
			copy(lastPicked, picked)
			lastBefore, lastGeneral = len(cands), general
			text := s.plain
			switch {
			case !s.first || s.item != lonePick || prev < 0:
			case s.label[0] >= '0' && s.label[0] <= '9':
				// "2. and 1-4 from the power list": a reply opening with a
				// number picks that option; it starts no list of one.
				text = s.label + "\x00" + text
			default:
				// "(a) for the secrets": the letter picks option (a); what
				// follows says what the option is for.
				text = "(" + s.label + ") " + text
			}
			for _, c := range userClauses(text) {
				if lc := lowerASCII(c); (strings.Contains(lc, " is ") || strings.Contains(lc, " are ")) && isAreRE.MatchString(c) {
					said = c
				} else {
					c = resolveIt(c, said)
				}
				if m := trailRefusal(c); m != "" {
					// "lock thing no": a refusal said last.
					c = "no " + m
				}
				lc := lowerASCII(c)
				if isInjection(lc) {
					continue
				}
				if isAside(lc) {
					// "Separate issue —", "I'll look into 2071": the user
					// turns to something else or takes a task away.
					continue
				}
				if reportedWishRE.MatchString(lc) {
					// "He wants your option 2.": what someone else would
					// choose, reported; the user has not chosen it.
					continue
				}
				if retractRE.MatchString(lc) {
					// "Ok, scratch that.": what the user decided last is
					// taken back, and nothing is accepted.
					retract(cands, i, before)
					continue
				}
				// "the mobile lead asked whether we should switch to RS256"
				// reports a question; it takes nothing back.
				// "change of mind on analysis: inline misses a late
				// regression, right?" asks only to confirm the reason.
				if reversalCues.match(lc) && (!isQuestion(lc) || tagQuestionRE.MatchString(lc)) && !reportedAskRE.MatchString(lc) {
					reversal = true
					against = append(against, newTokenSet(lc))
				}
				if m := topicNoRE.FindStringSubmatch(s.lower); m != nil && lc == "no "+m[1] {
					// "re the two PRs: no, one PR": what was settled on
					// that topic before is taken back.
					reversal = true
					against = append(against, newTokenSet(m[1]))
				}
				// "signing — secure boot burns efuses, right?": a word or
				// two before a question is its topic, not an answer.
				if isQuestion(lc) || words(lc) <= 2 && isQuestion(s.lower) {
					continue
				}
				// "no Redis" turns down what was offered; "ok, but skip the
				// sweeper" accepts the rest. A refusal of nothing on offer
				// after a yes ("ok, no global retries") is a decision.
				if m := exceptRE.FindStringSubmatch(lc); m != nil {
					// "all good except 3": the rest, not item 3.
					general = true
					for k, p := range props {
						if p.label == m[1] {
							turnedDown[k] = true
							against = append(against, p.set)
						}
					}
					continue
				}
				if yesLeadRE.MatchString(lc) && strings.Contains(lc, ", but ") {
					general = true // "yes, but make it 8 attempts": the plan, amended
				}
				if m := refuseLabelRE.FindStringSubmatch(lc); m != nil {
					// "scrap A": the option of that label, offered last, is
					// turned down.
					if p, ok := labelledOption(t, i, m[1]); ok {
						rejections = append(rejections, rejection{msg: i, set: p.set})
						against = append(against, p.set)
					}
					continue
				}
				body := strings.TrimSpace(unleadAck(lc))
				if head, _, ok := strings.Cut(body, ", "); ok && verdictEndRE.MatchString(head) {
					// "sliding 30 days is fine, people should never be
					// logged out": the verdict accepts; what follows is why.
					body = head
				}
				if obj := refusedObject(lc); obj != "" {
					// "yeah drop fetch": what the user accepted earlier in
					// those very words is taken back.
					takeBack(t, cands, i, obj)
				}
				if rejectRE.MatchString(lc) || body != lc && isRejection(body) || body == lc && isRejection(lc) {
					// "forget the min-height, do 2": a refusal, then a pick.
					refusal, pick, _ := strings.Cut(body, ", ")
					if pick != "" && !isRejection(refusal) && isRejection(pick) {
						// "one job at a time, a global flip scares me": the
						// pick first, then the refusal.
						refusal, pick = pick, refusal
					}
					if loc := andTakeRE.FindStringIndex(body); pick == "" && loc != nil {
						// "forget the cached count and go with simplePaginate()"
						refusal, pick = body[:loc[0]], strings.TrimSpace(body[loc[0]+len(" and"):])
					}
					pick, _, _ = strings.Cut(pick, ", ") // "do 2, render it server side": the pick
					if pick != "" && len(optionPicks(pick, props)) == 0 && !optionRefRE.MatchString(pick) && !takesInstead(t, i, prev, pick, props) {
						refusal, pick = body, ""
					}
					set := newTokenSet(refusal)
					hit := false
					for k, p := range props {
						if sharesWord(p.title, set) || sharesWord(p.set, set) && p.option {
							turnedDown[k] = true
							hit = true
						}
					}
					if k := refusedItem(refusal, props); !hit && k >= 0 {
						// "skip the dashboard for now": the one item of the
						// plan that has a dashboard.
						turnedDown[k] = true
						hit = true
					}
					if hit && body != lc && yesLeadRE.MatchString(lc) {
						general = true
					}
					if hit || isRejection(lc) {
						against = append(against, set)
						refused = c
						if pick == "" {
							continue
						}
					}
					if pick != "" {
						c, lc = cutLike(c, pick), pick
					}
				}
				if k := topicPick(lc, props); k >= 0 {
					// "rounding 1", "upgrade b, multisig": the list by its
					// topic, then the item by its label.
					picked[k] = 0.85
					continue
				}
				labels := optionPicks(lc, props)
				if ks := perListPicks(labels, props); ks != nil {
					for _, k := range ks {
						picked[k] = 0.9
					}
				} else {
					for _, l := range labels {
						for k, p := range props {
							if p.label == l {
								picked[k] = 0.9
								break
							}
						}
					}
				}
				if rest := andRest(lc); rest != "" && len(labels) > 0 && len(optionPicks(rest, props)) == 0 {
					// "Option 1, and the conditional update too": a
					// second pick, by name; "2 + the retry thing": what
					// the reply proposed besides its options.
					k := echoPick(t, rest, props)
					if k < 0 {
						k = echoProse(rest, props)
					}
					if k >= 0 {
						picked[k] = max(picked[k], 0.8)
					}
				}
				if len(labels) == 0 && strings.Contains(lc, "you") && deferRE.MatchString(lc) {
					// "go with your recommendation": what the assistant
					// recommended, the option it names if it names one.
					if ks := recommended(t, props); len(ks) > 0 {
						for _, k := range ks {
							picked[k] = max(picked[k], 0.75)
						}
						continue
					}
				}
				if ks := rangePicks(lc, props); len(ks) > 0 {
					// "1-4 from the power list", "all 5": items by range.
					for _, k := range ks {
						picked[k] = max(picked[k], 0.85)
					}
				}
				ords := ordinalPicks(lc, props)
				for _, k := range ords {
					picked[k] = max(picked[k], 0.85)
				}
				if len(ords) > 0 && len(labels) == 0 {
					continue // "the second one": picked by place, nothing more said
				}
				echoed := false
				if len(labels) == 0 && words(lc) <= 6 && yesCues.match(lc) && !answersFact(lc, factQ) {
					// "lazy load yes": one item of the plan, accepted by name.
					if k := echoItem(lc, props); k >= 0 {
						picked[k] = max(picked[k], 0.75)
						continue
					}
				}
				if ks := echoItems(lc, props); len(labels) == 0 && len(ks) > 1 {
					// "the sweeper and the gauge": items of the plan, by name.
					for _, k := range ks {
						picked[k] = max(picked[k], 0.75)
					}
					continue
				}
				// "Redis later maybe, not in this change": put off, not picked.
				if len(labels) == 0 && !isFact(lc) && !putOff(lc) {
					if ks := echoPicks(t, lc, props); len(ks) > 1 {
						for _, k := range ks {
							picked[k] = max(picked[k], 0.8)
						}
						echoed = true
					} else if k := echoPick(t, lc, props); k >= 0 && !siblingPicked(props, picked, k) {
						if staysRE.MatchString(lc) && undoRE.MatchString(lowerASCII(props[k].name)) {
							// "full mode stays on" to "Turn full mode off":
							// what the option would undo stays.
							turnedDown[k] = true
							continue
						}
						picked[k] = max(picked[k], 0.8)
						echoed = true
					} else if d := earlierPick(t, i, prev, lc, props, false); d != nil {
						cands = append(cands, d) // "replica then": an option offered before
						echoed = true
						if parenLabelRE.MatchString(pickCore(lc)) {
							continue // "go with your (b), the split": said by its label
						}
					} else if d := reversalPick(t, i, prev, lc, props); d != nil {
						// "let's do big bang after all, but rehearse it
						// first": an option offered before, taken back up.
						cands = append(cands, d)
						continue
					} else if head, _, ok := strings.Cut(lc, ", "); ok && words(lc) > 3 && !turnsDown(head) {
						// "Homegrown, flags table in our existing postgres":
						// an option named first, then said in full.
						if d := earlierPick(t, i, prev, head, props, false); d != nil && len(tokens(lc)) >= 3 {
							d.Content = tidy(c)
							cands = append(cands, d)
							echoed = true
						} else if k := echoPick(t, head, props); k >= 0 && len(tokens(lc)) >= 3 {
							// "Redis, but with a 10 minute TTL": the option
							// just offered, as the user amends it.
							d := &candidate{msg: i, group: listGroup(prev, props[k].list), subject: props[k].set}
							d.Content, d.Confidence, d.Sources = tidy(c), 0.8, []int{prev, i}
							cands = append(cands, d)
							echoed = true
						}
					}
				}
				if isPureAcceptance(lc) {
					general = true
					continue
				}
				if len(labels) > 0 || echoed && words(lc) <= 5 {
					continue
				}
				if isFact(lc) || answersFact(lc, factQ) || answersAnyFact(lc, factQs) {
					continue // "yes, split deliveries happen" answers how things are
				}
				if d := decide(t, i, prev, c, lc); d != nil && enoughSaid(d.Content, lc) && (d.Confidence >= 0.9 || namesOffer(t, prev, d.Content)) && (len(d.Sources) > 1 || saysWhat(t, prev, d.Content, lc)) {
					if len(tokens(lowerASCII(refused))) >= 2 && insteadRE.MatchString(lc) {
						// "No auto redirect. Show a banner instead.": the
						// choice says what replaces the refusal before it.
						d.Content = tidy(refused) + "; " + lowerFirst(strings.TrimRight(d.Content, ".!")) + " instead"
					}
					cands = joinTerse(cands, d)
				} else if d := choiceAnswer(t, i, prev, c, lc); d != nil {
					cands = append(cands, d)
				} else if d := labelledAnswer(t, i, prev, c, lc); d != nil {
					cands = append(cands, d)
				} else if k := echoProse(lc, props); k >= 0 && len(labels) == 0 && words(lc) <= 6 && yesCues.match(lc) {
					// "yes migrate": a recommendation in prose, by its word.
					picked[k] = max(picked[k], 0.7)
				}
			}
		}
		anyPick := false
		for _, p := range picked {
			anyPick = anyPick || p > 0
		}
		// "yes" to a reply that offers options and recommends one of them
		// ("I'd go with 2") takes that option, in its own words.
		named := make([]bool, len(props))
		if general && !anyPick {
			for k, p := range props {
				if p.item < 0 && !p.option {
					if o := namedOption(t, props, k); o >= 0 {
						picked[o] = max(picked[o], 0.75)
						named[k], anyPick = true, true
					}
				}
			}
		}
		for k, p := range props {
			conf := picked[k]
			switch {
			case turnedDown[k] && conf == 0:
				rejections = append(rejections, rejection{msg: i, set: p.set})
				continue
			case conf == 0 && p.option && anyPick && props[pickedList(props, picked)].msg == p.msg:
				rejections = append(rejections, rejection{msg: i, set: p.set})
				continue
			case conf == 0 && isLetter(p.label) && letterPicked(props, picked, k):
				// "a, fine. ship it" under "(a) … (b) … (c) …": lettered
				// items are alternatives; the pick leaves the others out.
				rejections = append(rejections, rejection{msg: i, set: p.set})
				continue
			case conf == 0 && general && !p.option && !p.heads && !named[k]:
				conf = 0.7
			}
			if conf == 0 {
				continue
			}
			text := props[k].decision()
			if text == "" && picked[k] > 0 && p.item >= 0 {
				// "lazy load yes": an item the user named is what they
				// accepted, even when it describes the design ("a reader
				// is only loaded when asked for") rather than instructs.
				text = props[k].described()
			}
			if text == "" {
				continue
			}
			d := &candidate{msg: i, group: -1, subject: p.set}
			if p.option {
				d.group = listGroup(prev, p.list)
			}
			d.Content = text
			d.Confidence = conf
			d.Sources = []int{prev, i}
			cands = append(cands, d)
		}
		if general && !plans(props) {
			cands = append(cands, pendingPlan(t, i, prev, answered)...)
		}
		if general && !anyPick && len(against) == 0 {
			if text := askedToDo(t, prev); text != "" {
				// "Should we also export a metric for misses?" — "yes".
				d := &candidate{msg: i, group: -1, subject: newTokenSet(lowerASCII(text))}
				d.Content, d.Confidence, d.Sources = text, 0.7, []int{prev, i}
				cands = append(cands, d)
			}
		}
		if prev >= 0 && (len(cands) > before || general || anyPick || len(against) > 0) {
			answered[prev] = true
		}
		if prev >= 0 && (len(cands) > before || general || anyPick) {
			// "Drop resourceLimits and put this in nextflow.config" —
			// "ship it": what the user chose before in those words goes.
			for _, s := range t.sents[prev] {
				// "Remove Alamofire from the Podfile", "drop TTLs to 60s",
				// "remove it two weeks after": edits and steps of a plan,
				// not a choice taken back.
				if s.bullet || containsAny(s.lower, " from ", " to ", " after ", " once ", " when ", " until ") {
					continue
				}
				if m := dropObjRE.FindStringSubmatch(t.statementOf(s)); m != nil && !pointerWords[m[1]] && !genericWords[m[1]] {
					takeBack(t, cands, prev, m[1])
				}
			}
		}
		// The opening message agrees to nothing: the reply confirms a
		// choice in it only when it made one outright.
		if (prev >= 0 || choseOutright(cands[before:])) && (userAgreed(t, i, cands) || general || anyPick || replyEchoes(t, i)) {
			if d := confirmation(t, i); d != nil {
				cands = adoptConfirmation(cands, d, i)
			}
		}
		if !reversal {
			continue
		}
		for _, c := range cands[before:] {
			if c.msg == i && c.group < 0 {
				// "Actually, let's go with Redis after all": the option
				// named, from the list it was offered in.
				c.group = namedGroup(t, i, c.subject)
			}
		}
		// A reversal replaces earlier choices on the same subject: earlier
		// decisions sharing distinctive words with what this message takes
		// back.
		taken := make([]*echoIndex, len(against))
		for k, a := range against {
			taken[k] = newEchoIndex(a)
		}
		for _, c := range cands {
			if c.msg >= i || c.removed {
				continue
			}
			for _, a := range taken {
				if sharesDistinctive(c.subject, a, t) {
					c.removed = true
					break
				}
			}
		}
	}
	// A later choice from the same option list replaces an earlier one (the
	// assistant's confirmation of a choice is no later choice).
	for j, c := range cands {
		for _, later := range cands[j+1:] {
			if c.group >= 0 && later.group == c.group && later.msg > c.msg && t.msgs[later.msg].Role == agent.RoleUser {
				c.removed = true
			}
		}
	}
	// A choice made "for now" gives way to a later pick from a list of
	// options on the same subject ("keep 100% sampling for now", later
	// "(a), 10% parent-based" from the sampling options).
	for j, c := range cands {
		if c.removed || c.group >= 0 || !strings.Contains(lowerASCII(c.Content), "for now") {
			continue
		}
		for _, later := range cands[j+1:] {
			if later.group >= 0 && later.msg > c.msg && !later.removed && t.msgs[later.msg].Role == agent.RoleUser &&
				sharesDistinctive(c.subject, newEchoIndex(later.subject), t) {
				c.removed = true
				break
			}
		}
	}
	// A rejected option is never a decision, unless chosen again later.
	for _, c := range cands {
		if c.removed || len(rejections) == 0 {
			continue
		}
		set := newTokenSet(lowerASCII(c.Content))
		for _, r := range rejections {
			if c.msg <= r.msg && similarity(set, r.set) >= 0.6 {
				c.removed = true
			}
		}
	}
	var out []agent.ExtractedDecision
	var sets []tokenSet
	for _, c := range cands {
		c.Content = pickedAlternative(t, c)
		// The opening message of a talk states what it is about: unless it
		// chooses outright ("let's go with HS256"), what it says alone,
		// agreed to by no one, is no decision.
		opening := len(t.msgs) > 1 && len(c.Sources) == 1 && c.Sources[0] == 0 && c.Confidence < 0.9
		if c.removed || opening {
			continue
		}
		lc := lowerASCII(c.Content)
		if trimmed := strings.TrimSpace(lc); picksOnlyRE.MatchString(trimmed) || noWorkRE.MatchString(trimmed) {
			continue
		}
		set := newTokenSet(lc)
		dup := false
		for k, s := range sets {
			// "Separate redis-reports connection, leave the default one at
			// 90" and the same with its reason after a colon: one decision.
			if similarity(set, s) >= 0.6 || restatesStart(out[k].Content, c.Content) {
				out[k].Sources = distinct(append(out[k].Sources, c.Sources...))
				out[k].Confidence = max(out[k].Confidence, c.Confidence)
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, c.ExtractedDecision)
			sets = append(sets, set)
		}
	}
	return out
}

// altsRE is a decision that only names two alternatives: "Ktor or Spring
// Boot", "Framework: Ktor or Spring Boot".
var altsRE = mustPattern(`^(?:([\w' -]{1,30}): )?([\w.+#/-]+(?: [\w.+#/-]+){0,3}) or ([\w.+#/-]+(?: [\w.+#/-]+){0,3})[.!]?$`)

// pickedAlternative returns the content of c, or, when it only names two
// alternatives and the user's message it comes from names one of them
// ("Ktor is fine."), that one.
func pickedAlternative(t *transcript, c *candidate) string {
	if !strings.Contains(c.Content, " or ") {
		return c.Content // the quick test altsRE needs
	}
	m := altsRE.FindStringSubmatch(c.Content)
	if m == nil || len(c.Sources) == 0 {
		return c.Content
	}
	last := t.msgs[c.Sources[len(c.Sources)-1]]
	if last.Role != agent.RoleUser {
		return c.Content
	}
	said := newTokenSet(lowerASCII(last.Content))
	a, b := saysAll(said, m[2]), saysAll(said, m[3])
	var pick string
	switch {
	case a && !b:
		pick = m[2]
	case b && !a:
		pick = m[3]
	default:
		return c.Content
	}
	if m[1] != "" {
		return m[1] + ": " + pick
	}
	return "Use " + pick
}

// saysAll reports whether the words said hold every word of name.
func saysAll(said tokenSet, name string) bool {
	n := 0
	for w := range newTokenSet(lowerASCII(name)) {
		if _, ok := said[w]; !ok {
			return false
		}
		n++
	}
	return n > 0
}

// restatesStart reports whether one of two decisions is the other with
// more said after it: the shorter, of four words or more, opens the longer.
func restatesStart(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	a = strings.TrimRight(a, ".!… ")
	return words(a) >= 4 && hasPrefixFold(b, a)
}

// asideRE is a user's clause that decides nothing: a turn to another
// topic ("separate issue", "side note") or a task the user takes on to find
// something out ("I'll look into it", "let me check").
var asideRE = mustPattern(`^(?:(?:ok|okay|also|and|so|oh)\W+)*(?:(?:a )?separate (?:issue|question|thing|topic)|side note|unrelated|fyi|update)\W*$|\b(?:i'll|i will|we'll|let me|i need to|i have to) (?:look into|check|ask|find out|think about|see|get back|dig into|investigate)\b`)

// isAside reports whether lower-cased clause lc is an aside, as asideRE
// reads one; it tries the pattern only on clauses with one of its words.
func isAside(lc string) bool {
	if words(lc) <= 5 && containsAny(lc, "separate", "side note", "unrelated", "fyi", "update") {
		return asideRE.MatchString(lc)
	}
	return containsAny(lc, "i'll ", "we'll ", "i will ", "let me ", "i need ", "i have ") && asideRE.MatchString(lc)
}

// wrongTurnRE is a message's opening that takes back what the user decided
// last, before saying what instead: "Wait, no.", "Actually, no —".
var wrongTurnRE = mustPattern(`^(?:wait|actually|hm+|oh)\W+no\b[\s.!,—–-]*$`)

// retractRE is a clause that takes back what the user just decided ("ok,
// scratch that", "never mind").
var retractRE = mustPattern(`^(?:(?:ok|okay|hm+|wait|actually|no|sorry)\W+)*(?:scratch that|scrap that|forget that|forget it|never ?mind|disregard that|strike that)\b[\s.!,]*$`)

// selfCorrectRE opens a sentence that takes back the one before it:
// "actually no,", "wait, no", "no wait".
var selfCorrectRE = mustPattern(`^(?:(?:actually|wait|hm+|oh)\W+no(?:pe)?\b|no\W+wait\b)`)

// retract removes what message i decided before its retraction (cands
// from before on), else the decisions of the last user message before it
// that made any.
func retract(cands []*candidate, i, before int) {
	if len(cands) > before {
		// "Add dayKey then. Wait, no, scratch that.": what this message
		// decided before it.
		for _, c := range cands[before:] {
			c.removed = true
		}
		return
	}
	last := -1
	for _, c := range cands {
		if c.msg < i && !c.removed {
			last = max(last, c.msg)
		}
	}
	for _, c := range cands {
		if c.msg == last {
			c.removed = true
		}
	}
}

// trailRefusalRE is a terse clause that names something and then turns
// it down ("lock thing no", "the sweeper, nope", "2 no").
var trailRefusalRE = mustPattern(`(?i)^([a-z0-9(][\w ./+()-]*?),?\s+(?:no|nope|nah)[.!]*$`)

// trailRefusal returns what a terse clause turns down last ("lock thing
// no": "lock thing"), or "".
func trailRefusal(c string) string {
	end := strings.TrimRight(c, ".! ")
	if !strings.HasSuffix(end, "no") && !strings.HasSuffix(end, "nope") && !strings.HasSuffix(end, "nah") {
		return ""
	}
	if m := trailRefusalRE.FindStringSubmatch(c); m != nil && words(m[1]) <= 4 {
		return m[1]
	}
	return ""
}

// insteadRE ends a clause that says what to do in place of something
// ("show a banner instead").
var insteadRE = mustPattern(`\binstead[.!]*$`)

// picksOnlyRE is a sentence that only picks options by their labels ("I'd
// go with B", "Do 1 + 2 + 3b", "scrap A, go with your B"): it points at the decision without saying
// it, so it is no decision of its own.
var picksOnlyRE = mustPattern(`^(?:(?:scrap|drop|forget|skip|not|no)\s+(?:option\s+)?[0-9]{0,2}[a-h]?,?\s+)?(?:(?:i'd|i would|i'll|let's|we'll|we should|so|then)\s+)?(?:go with|do|pick|take|choose|recommend)\s+(?:both\s+|all\s+)?(?:options?\s+)?(?:your\s+)?\(?[0-9]{0,2}[a-h]?\)?(?:\s*(?:\+|,|and|&)\s*\(?[0-9]{0,2}[a-h]?\)?)*[.!]?$`)

// noWorkRE opens a statement that there is nothing to do ("Nothing
// special, perms cover it"): no decision.
var noWorkRE = mustPattern(`^(?:nothing (?:special|to (?:do|change)|needed|changes)|no changes?(?: needed)?|neither\b.{1,80}\bnor\b.{1,60}\b(?:changes?|needs? (?:anything|changing|a change)))\b`)

// plans reports whether props hold a plan item or recommendation that
// says what to do: something a plain "yes" accepts.
func plans(props []proposal) bool {
	for k := range props {
		if !props[k].option && props[k].decision() != "" {
			return true
		}
	}
	return false
}

// pendingPlan returns, as decisions of user message i, the plan of the
// assistant message before prev when prev proposed nothing to do and the
// user never answered that plan: "4 cpus. what about batching?" — an
// answer about batching — "ok, go" accepts the plan still on the table.
func pendingPlan(t *transcript, i, prev int, answered []bool) []*candidate {
	j := previousAssistant(t, prev)
	if j < 0 || answered[j] {
		return nil
	}
	var out []*candidate
	for _, p := range t.assistantProposals(j) {
		if p.option {
			continue
		}
		if text := p.decision(); text != "" {
			d := &candidate{msg: i, group: -1, subject: p.set}
			d.Content = text
			d.Confidence = 0.6
			d.Sources = []int{j, i}
			out = append(out, d)
		}
	}
	return out
}

// pronounObjRE is a terse instruction whose object is a pronoun
// ("memoize it", "fix them").
var pronounObjRE = mustPattern(`(?i)^([a-z-]+) (?:it|them|that)[.!]*$`)

// isAreRE finds where a statement's subject ends: "sort is in useOrders.ts".
var isAreRE = mustPattern(`(?i)^([^,;:]{2,40}?) (?:is|are) (?:(?:still|already|currently|all) )?`)

// resolveIt reads a terse instruction with a pronoun ("memoize it") as
// about the subject of the statement just before it ("sort is in
// useOrders.ts, not memoized"): "memoize sort in useOrders.ts". Other
// clauses come back as they are.
func resolveIt(c, before string) string {
	m := pronounObjRE.FindStringSubmatch(strings.TrimSpace(c))
	if m == nil || !imperative(lowerASCII(m[1])) || controlRE.MatchString(lowerASCII(c)) {
		return c
	}
	loc := isAreRE.FindStringSubmatchIndex(before)
	if loc == nil {
		return c
	}
	subject := before[loc[2]:loc[3]]
	rest, _, _ := strings.Cut(before[loc[1]:], ",")
	rest = strings.TrimRight(strings.TrimSpace(rest), ".!")
	if !strings.HasPrefix(lowerASCII(rest), "in ") && !strings.HasPrefix(lowerASCII(rest), "on ") {
		rest = "" // "sort is slow": only where it is says more
	}
	return strings.TrimSpace(m[1] + " " + subject + " " + rest)
}

// listGroup identifies list number list of message msg, so that a later
// pick from the same list replaces an earlier one while picks from two
// lists of one message ("where to keep tokens", "how to sign them") stand
// together.
func listGroup(msg, list int) int {
	return msg<<10 | max(list, 0)
}

// joinWords is how many content words a user's decision may have and still
// be read as part of the one before it from the same message.
const joinWords = 4

// refersBackRE finds a word that points at something said before ("put
// them in …", "same for it").
var refersBackRE = mustPattern(`\b(?:them|it|those|these|that one|there|same|too|also)\b`)

// joinTerse adds d, a decision in the user's own words, to cands. A user
// who states one decision in terse clauses ("Add overrides. Put them in
// config/limits.yaml. Restart is fine, no hot reload.") made one decision:
// a terse clause joins the terse decision said just before it in the same
// message.
func joinTerse(cands []*candidate, d *candidate) []*candidate {
	n := len(tokens(lowerASCII(d.Content)))
	if n > joinWords || len(cands) == 0 {
		return append(cands, d)
	}
	last := cands[len(cands)-1]
	m := len(tokens(lowerASCII(last.Content)))
	if last.msg != d.msg || last.removed || last.group >= 0 || len(last.Sources) != len(d.Sources) ||
		m+n > 3*joinWords || m > 2 && !refersBackRE.MatchString(lowerASCII(d.Content)) {
		return append(cands, d)
	}
	last.Content = strings.TrimRight(last.Content, ".!") + "; " + lowerFirst(d.Content)
	last.subject = newTokenSet(lowerASCII(last.Content))
	last.Confidence = min(last.Confidence, d.Confidence)
	return cands
}

// isLetter reports whether label is a letter, "a" to "h".
func isLetter(label string) bool {
	return len(label) == 1 && label[0] >= 'a' && label[0] <= 'h'
}

// letterPicked reports whether another lettered item of the list of
// props[k] was picked.
func letterPicked(props []proposal, picked []float64, k int) bool {
	for j, p := range props {
		if j != k && picked[j] > 0 && isLetter(p.label) && p.msg == props[k].msg && p.list == props[k].list {
			return true
		}
	}
	return false
}

// pickedList returns the index of a picked proposal.
func pickedList(props []proposal, picked []float64) int {
	for k := range props {
		if picked[k] > 0 {
			return k
		}
	}
	return 0
}
