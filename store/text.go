package store

import (
	"strings"
	"unicode"
)

// The one rule for stored text (titles, messages, items, names): no
// control characters but tab and newline, and none of the bidirectional
// overrides and isolates (U+202A–U+202E, U+2066–U+2069), which make text
// read differently from what it says. Line ends are stored as "\n": a
// browser sends a textarea's as "\r\n".

// badTextRune reports whether stored text may not contain r.
func badTextRune(r rune) bool {
	return (r != '\n' && r != '\t' && unicode.IsControl(r)) ||
		(r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069')
}

// unixNewlines turns "\r\n" and a lone "\r" into "\n".
func unixNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// checkChars returns an EINVALID *Error naming what if s breaks the rule.
func checkChars(what, s string) error {
	if strings.IndexFunc(s, badTextRune) >= 0 {
		return Errorf(EINVALID, "%s contains a control character or a text-direction override; remove it.", capitalize(what))
	}
	return nil
}

// stripBadRunes removes what the rule refuses from text nobody typed (a
// model's reply): refusing it would lose the reply.
func stripBadRunes(s string) string {
	if strings.IndexFunc(s, badTextRune) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if badTextRune(r) {
			return -1
		}
		return r
	}, s)
}

// unsafeText reports whether s breaks the rule (see badTextRune).
func unsafeText(s string) bool {
	return strings.IndexFunc(s, badTextRune) >= 0
}
