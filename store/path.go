package store

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// CleanPath turns a file reference into a repository-relative path, or
// reports false when the reference must not become a file reference at
// all. It is the one set of path rules: FileRef.Validate applies it to
// every path stored, whether a person typed it or the extraction took it
// from a conversation.
//
// Conversation text is data, so CleanPath is strict. It strips surrounding
// whitespace, backticks, quotes and brackets, trailing punctuation and a
// leading "./". It rejects the result when it is empty or longer than
// MaxPathLen; absolute (/x, C:\x, ~/x, $HOME/x, %APPDATA%); contains a ".."
// or "." segment or an empty segment; looks like a URL or any "scheme:"
// (a colon anywhere is refused); uses backslashes; or holds whitespace,
// control characters or invalid UTF-8. A trailing "/" (a directory) is
// removed. CleanPath is idempotent: cleaning its output returns it unchanged.
func CleanPath(raw string) (string, bool) {
	// A rune is at most 4 bytes: longer input cannot clean to MaxPathLen
	// characters, whatever it is wrapped in, except in absurd quoting.
	if len(raw) > 4*MaxPathLen || !utf8.ValidString(raw) {
		return "", false
	}
	p := raw
	for {
		before := p
		p = strings.TrimSpace(p)
		p = strings.TrimLeft(p, "`'\"“”‘’(<[{")
		p = strings.TrimRight(p, "`'\"“”‘’)>]},.;:!?")
		for strings.HasPrefix(p, "./") {
			p = p[2:]
		}
		p = strings.TrimRight(p, "/")
		if p == before {
			break
		}
	}
	if p == "" || utf8.RuneCountInString(p) > MaxPathLen {
		return "", false
	}
	switch p[0] {
	case '/', '~', '$', '%', '-':
		return "", false
	}
	// % would let "%2e%2e" pass for ".." once a browser decodes a link.
	if strings.ContainsAny(p, "\\:*?|%") {
		return "", false
	}
	for _, r := range p {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == utf8.RuneError ||
			unicode.Is(unicode.Cf, r) || lookalike(r) {
			return "", false
		}
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", false
		}
	}
	return p, true
}

// lookalike reports full-width forms (U+FF00–U+FFEF: "．．／") and the
// one- and two-dot leaders (U+2024, U+2025), which read as dots and
// slashes but are not, so a path using them is not what it seems.
func lookalike(r rune) bool {
	return (r >= 0xFF00 && r <= 0xFFEF) || r == 0x2024 || r == 0x2025
}
