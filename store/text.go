package store

import "unicode"

// unsafeText reports C0 and C1 controls other than tab and newline, and
// bidi overrides and isolates, which can make text read other than it is: the one rule for
// text people write that Baton stores and shows.
func unsafeText(s string) bool {
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
		case unicode.IsControl(r), r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
			return true
		}
	}
	return false
}
