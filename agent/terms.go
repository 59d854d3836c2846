package agent

import (
	"strings"
	"unicode"
)

// This file is the one tokenizer of Baton's text rules: the words of a
// text, their stems, the stop words. Memory capture (which decision
// concerns which file or risk), the reversal rule and the full-text query
// terms all use it, so a word counts the same everywhere.

// Words splits text into lower-case words: runs of letters and digits. An
// apostrophe inside a word stays in it, so "don't" is one word; a
// typographic apostrophe (’) counts as a plain one, and apostrophes around
// a word ('quoted') are dropped.
func Words(text string) []string {
	text = strings.ReplaceAll(strings.ToLower(text), "’", "'")
	fields := strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	})
	out := fields[:0]
	for _, w := range fields {
		if w = strings.Trim(w, "'"); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// Stem reduces a lower-case word to the form texts are compared in: the
// plural "s" of a word of five letters or more goes ("sessions" →
// "session"), a double "ss" stays ("process"). It is deliberately light:
// the full-text index stems words of its own (porter) on both sides.
func Stem(w string) string {
	if len(w) > 4 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
		return w[:len(w)-1]
	}
	return w
}

// IsStopWord reports whether the lower-case word w is too common to say
// what a text is about: articles, pronouns, auxiliaries, conversational
// filler ("okay", "thing", "want") and the like.
func IsStopWord(w string) bool { return stopWords[w] }

// Terms returns the words of text that say what it is about, in order,
// each through Stem: the Words of text that are not stop words.
func Terms(text string) []string {
	var out []string
	for _, w := range Words(text) {
		if !stopWords[w] {
			out = append(out, Stem(w))
		}
	}
	return out
}

// maxTermLen is the longest word, in characters, worth a full-text lookup.
const maxTermLen = 64

// MaxQueryTerms is how many words of a person's search SearchTerms keeps;
// they are all required.
const MaxQueryTerms = 8

// SearchTerms returns the words of a person's search to look up in the
// memory's full text (store.DecisionRecordFilter.Terms): as searchTerms
// picks them, at most MaxQueryTerms.
func SearchTerms(query string) []string { return searchTerms(query, MaxQueryTerms) }

// searchTerms picks the words of text worth a full-text lookup: no stop
// words, each once, at most max of them (the last ones, since the end of a
// conversation matters most), in the order they were written. If every word
// is a stop word, the stop words are used. Words are not stemmed: the
// full-text index stems them itself.
func searchTerms(text string, max int) []string {
	all := Words(text)
	var terms []string
	seen := map[string]bool{}
	pick := func(stop bool) {
		for i := len(all) - 1; i >= 0 && len(terms) < max; i-- {
			w := all[i]
			if (!stop && stopWords[w]) || seen[w] || len([]rune(w)) > maxTermLen {
				continue
			}
			seen[w] = true
			terms = append(terms, w)
		}
	}
	pick(false)
	if len(terms) == 0 {
		pick(true)
	}
	for i, j := 0, len(terms)-1; i < j; i, j = i+1, j-1 {
		terms[i], terms[j] = terms[j], terms[i]
	}
	return terms
}

// stopWords are the words IsStopWord reports.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all also am an and any are as at be because
	been before being below between both but by can could did do does doing done down during each even every few
	for from further had has have having he her here hers him his how i if in into is it its itself just let lets
	like made make makes many may me might more most much must my need needs needed no nor not now of off on once
	one only onto or other our ours out over own per same shall she should so some such than that the their
	theirs them then there these they this those through to too two under until up upon us use used uses using
	very via was way ways we well were what when where which while who whom why will with within without would
	yes yet you your yours thing things want wants going get gets got keep keeps kept okay ok sure really maybe
	think less add adds added new put puts set sets instead
	don't dont doesn't didn't can't won't isn't aren't wasn't it's that's let's we'll i'll i'd i'm we're you're
	they're what's there's`) {
		m[w] = true
	}
	return m
}()
