package envelope

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// node is a parsed JSON value: its kind, its text in the input, and for an
// object its members in order, for an array its items. Decode parses an
// envelope once into nodes and reads every field from them, so that a large
// string (a plan's markdown) is scanned once instead of once per level of
// encoding/json's nested Unmarshal calls.
//
// A node's text, and its key, are substrings of one string copy of the
// input, so that reading a plain string (no escapes, valid UTF-8) or a
// member name allocates nothing.
type node struct {
	kind  byte // '{', '[', '"', '0' (a number), 't', 'f', 'n' (null)
	plain bool // strings: no escapes and valid UTF-8, so raw[1:len-1] is the value
	raw   string
	key   string // the member name of an object's member value
	vals  []node // objects: the member values, in order; arrays: the items
}

// member returns the value of the last member named key (the one
// encoding/json would keep), or nil.
func (n *node) member(key string) *node {
	for i := len(n.vals) - 1; i >= 0; i-- {
		if n.vals[i].key == key {
			return &n.vals[i]
		}
	}
	return nil
}

// str returns a string node's value.
func (n *node) str() string {
	if n.plain {
		return n.raw[1 : len(n.raw)-1]
	}
	return unquote(n.raw[1 : len(n.raw)-1])
}

// unquote decodes the inside of a JSON string the parser checked, as
// encoding/json does: escapes decoded, invalid UTF-8 and lone surrogates
// replaced by U+FFFD.
func unquote(s string) string {
	var b strings.Builder
	b.Grow(len(s)) // escapes shorten a string; only invalid UTF-8 lengthens it
	for len(s) > 0 {
		j := strings.IndexByte(s, '\\')
		if j < 0 {
			j = len(s)
		}
		writeValid(&b, s[:j])
		if s = s[j:]; len(s) == 0 {
			break
		}
		switch s[1] {
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r := hex4(s[2:6])
			s = s[4:] // s[1] is the last hex digit
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if len(s) >= 8 && s[2] == '\\' && s[3] == 'u' {
					r2 = hex4(s[4:8])
				}
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					r = dec
					s = s[6:]
				} else {
					r = utf8.RuneError
				}
			}
			b.WriteRune(r)
		default: // " \\ /
			b.WriteByte(s[1])
		}
		s = s[2:]
	}
	return b.String()
}

// writeValid writes s, with each byte of invalid UTF-8 as U+FFFD.
func writeValid(b *strings.Builder, s string) {
	if utf8.ValidString(s) {
		b.WriteString(s)
		return
	}
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[:size])
		}
		s = s[size:]
	}
}

// hex4 reads four hex digits the parser checked.
func hex4(h string) rune {
	var r rune
	for i := range 4 {
		c := h[i]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		default:
			c = c - 'A' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// maxDepth bounds nesting, as encoding/json does.
const maxDepth = 10000

// syntaxError is where and why JSON text breaks.
type syntaxError struct {
	offset int
	msg    string
}

// parser reads JSON text into nodes. The members and items of the
// containers it is inside collect on stack; when a container closes they
// move to arena, a few large blocks shared by all containers, instead of
// each container growing a slice of its own.
type parser struct {
	data  []byte
	src   string // data, copied once: the nodes' text
	i     int
	// quote and bslash are the index of the next '"' and '\\' from i on
	// (len(data) when there is none), once they are looked for.
	quote, bslash int
	stack []node
	arena []node
}

// parse parses data as one JSON value, or says where it breaks. The nodes'
// text is in a string copy of data, made once.
func parse(data []byte) (*node, *syntaxError) {
	p := &parser{data: data, src: string(data), quote: -1, bslash: -1}
	p.space()
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i < len(p.data) {
		return nil, p.fail("unexpected %s after the top-level value", p.char())
	}
	return &n, nil
}

func (p *parser) fail(format string, args ...any) *syntaxError {
	return &syntaxError{offset: p.i, msg: fmt.Sprintf(format, args...)}
}

func (p *parser) char() string {
	if p.i >= len(p.data) {
		return "end of input"
	}
	r, _ := utf8.DecodeRune(p.data[p.i:])
	return fmt.Sprintf("character %q", r)
}

func (p *parser) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// children moves the nodes on the stack from mark on into the arena and
// returns them.
func (p *parser) children(mark int) []node {
	k := len(p.stack) - mark
	if k == 0 {
		return nil
	}
	if cap(p.arena)-len(p.arena) < k {
		p.arena = make([]node, 0, max(k, 1024))
	}
	start := len(p.arena)
	p.arena = append(p.arena, p.stack[mark:]...)
	p.stack = p.stack[:mark]
	return p.arena[start:len(p.arena):len(p.arena)]
}

func (p *parser) value(depth int) (node, *syntaxError) {
	if depth > maxDepth {
		return node{}, p.fail("nested too deeply")
	}
	if p.i >= len(p.data) {
		return node{}, p.fail("unexpected end of input, looking for a value")
	}
	start := p.i
	switch c := p.data[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		plain, err := p.string()
		if err != nil {
			return node{}, err
		}
		return node{kind: '"', raw: p.src[start:p.i], plain: plain}, nil
	case c == '-' || c >= '0' && c <= '9':
		if err := p.number(); err != nil {
			return node{}, err
		}
		return node{kind: '0', raw: p.src[start:p.i]}, nil
	case c == 't':
		return p.literal("true", 't')
	case c == 'f':
		return p.literal("false", 'f')
	case c == 'n':
		return p.literal("null", 'n')
	}
	return node{}, p.fail("unexpected %s, looking for a value", p.char())
}

func (p *parser) literal(word string, kind byte) (node, *syntaxError) {
	if !strings.HasPrefix(p.src[p.i:], word) {
		return node{}, p.fail("unexpected %s, looking for %s", p.char(), word)
	}
	start := p.i
	p.i += len(word)
	return node{kind: kind, raw: p.src[start:p.i]}, nil
}

func (p *parser) object(depth int) (node, *syntaxError) {
	start := p.i
	p.i++ // {
	p.space()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		return node{kind: '{', raw: p.src[start:p.i]}, nil
	}
	mark := len(p.stack)
	for {
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			return node{}, p.fail("unexpected %s, looking for a member name", p.char())
		}
		ks := p.i
		plain, err := p.string()
		if err != nil {
			return node{}, err
		}
		key := p.src[ks+1 : p.i-1]
		if !plain {
			key = unquote(key)
		}
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != ':' {
			return node{}, p.fail("unexpected %s after a member name, looking for ':'", p.char())
		}
		p.i++
		p.space()
		v, err := p.value(depth + 1)
		if err != nil {
			return node{}, err
		}
		v.key = key
		p.stack = append(p.stack, v)
		p.space()
		if p.i >= len(p.data) {
			return node{}, p.fail("unexpected end of input in an object")
		}
		switch p.data[p.i] {
		case ',':
			p.i++
			p.space()
		case '}':
			p.i++
			return node{kind: '{', raw: p.src[start:p.i], vals: p.children(mark)}, nil
		default:
			return node{}, p.fail("unexpected %s in an object, looking for ',' or '}'", p.char())
		}
	}
}

func (p *parser) array(depth int) (node, *syntaxError) {
	start := p.i
	p.i++ // [
	p.space()
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
		return node{kind: '[', raw: p.src[start:p.i]}, nil
	}
	mark := len(p.stack)
	for {
		v, err := p.value(depth + 1)
		if err != nil {
			return node{}, err
		}
		p.stack = append(p.stack, v)
		p.space()
		if p.i >= len(p.data) {
			return node{}, p.fail("unexpected end of input in an array")
		}
		switch p.data[p.i] {
		case ',':
			p.i++
			p.space()
		case ']':
			p.i++
			return node{kind: '[', raw: p.src[start:p.i], vals: p.children(mark)}, nil
		default:
			return node{}, p.fail("unexpected %s in an array, looking for ',' or ']'", p.char())
		}
	}
}

// SWAR ("SIMD within a register") constants: a byte of ones in each of
// the eight lanes of a uint64, and each lane's high bit.
const (
	lanes1    = 0x0101010101010101
	lanesHigh = 0x8080808080808080
)

// next returns the index of the first c in data from i on, or len(data).
func next(data []byte, i int, c byte) int {
	if j := bytes.IndexByte(data[i:], c); j >= 0 {
		return i + j
	}
	return len(data)
}

// text checks that data[i:end] holds no control character, eight bytes at
// a time, and returns the index of the first one, or end. It ORs the bytes
// it passes into *high, whose high bits then tell whether any is not ASCII.
func text(data []byte, i, end int, high *uint64) int {
	h := *high
	for ; i+8 <= end; i += 8 {
		w := binary.LittleEndian.Uint64(data[i:])
		if (w-lanes1*0x20)&^w&lanesHigh != 0 { // a lane below 0x20
			break
		}
		h |= w
	}
	for ; i < end; i++ {
		c := data[i]
		if c < 0x20 {
			break
		}
		h |= uint64(c)
	}
	*high = h
	return i
}

// string scans a string from its opening quote past its closing one, and
// reports whether it is plain: no escapes, valid UTF-8. It finds the quotes
// and backslashes that end runs of plain text with bytes.IndexByte,
// remembering the next of each across strings.
func (p *parser) string() (plain bool, err *syntaxError) {
	start := p.i
	p.i++ // "
	plain = true
	var high uint64
	for {
		if p.quote < p.i {
			p.quote = next(p.data, p.i, '"')
		}
		if p.bslash < p.i {
			p.bslash = next(p.data, p.i, '\\')
		}
		end := min(p.quote, p.bslash)
		if p.i = text(p.data, p.i, end, &high); p.i < end {
			return false, p.fail("control character %#02x in a string", p.data[p.i])
		}
		if p.i >= len(p.data) {
			return false, p.fail("unexpected end of input in a string")
		}
		if p.data[p.i] == '"' {
			p.i++
			if plain && high&lanesHigh != 0 && !utf8.Valid(p.data[start:p.i]) {
				plain = false
			}
			return plain, nil
		}
		plain = false
		p.i++ // backslash
		if p.i >= len(p.data) {
			return false, p.fail("unexpected end of input in a string")
		}
		switch p.data[p.i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			p.i++
		case 'u':
			if p.i+5 > len(p.data) {
				p.i = len(p.data)
				return false, p.fail("unexpected end of input in a string")
			}
			for _, c := range p.data[p.i+1 : p.i+5] {
				if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
					return false, p.fail("invalid \\u escape in a string")
				}
			}
			p.i += 5
		default:
			return false, p.fail("invalid escape %s in a string", p.char())
		}
	}
}

// number scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (p *parser) number() *syntaxError {
	digits := func() int {
		n := 0
		for p.i < len(p.data) && p.data[p.i] >= '0' && p.data[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.data[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.data) && p.data[p.i] == '0':
		p.i++
	case digits() == 0:
		return p.fail("unexpected %s in a number", p.char())
	}
	if p.i < len(p.data) && p.data[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return p.fail("unexpected %s after a decimal point", p.char())
		}
	}
	if p.i < len(p.data) && (p.data[p.i] == 'e' || p.data[p.i] == 'E') {
		p.i++
		if p.i < len(p.data) && (p.data[p.i] == '+' || p.data[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return p.fail("unexpected %s in an exponent", p.char())
		}
	}
	return nil
}
