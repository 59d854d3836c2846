package envelope

import (
	"bytes"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// node is a parsed JSON value: its kind, its text in the input, and for an
// object its members in order, for an array its items. Decode parses an
// envelope once into nodes and reads every field from them, so that a large
// string (a plan's markdown) is scanned once instead of once per level of
// encoding/json's nested Unmarshal calls.
type node struct {
	kind  byte // '{', '[', '"', '0' (a number), 't', 'f', 'n' (null)
	raw   []byte
	keys  []string // objects
	vals  []*node  // objects: the member values; arrays: the items
	plain bool     // strings: no escapes and valid UTF-8, so raw[1:len-1] is the value
}

// member returns the value of the last member named key (the one
// encoding/json would keep), or nil.
func (n *node) member(key string) *node {
	for i := len(n.keys) - 1; i >= 0; i-- {
		if n.keys[i] == key {
			return n.vals[i]
		}
	}
	return nil
}

// str returns a string node's value.
func (n *node) str() string {
	if n.plain {
		return string(n.raw[1 : len(n.raw)-1])
	}
	return unquote(n.raw[1 : len(n.raw)-1])
}

// unquote decodes the inside of a JSON string the parser checked, as
// encoding/json does: escapes decoded, invalid UTF-8 and lone surrogates
// replaced by U+FFFD.
func unquote(s []byte) string {
	b := make([]byte, 0, len(s))
	for len(s) > 0 {
		j := bytes.IndexByte(s, '\\')
		if j < 0 {
			j = len(s)
		}
		b = appendValid(b, s[:j])
		if s = s[j:]; len(s) == 0 {
			break
		}
		switch s[1] {
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
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
			b = utf8.AppendRune(b, r)
		default: // " \\ /
			b = append(b, s[1])
		}
		s = s[2:]
	}
	return string(b)
}

// appendValid appends s, with each byte of invalid UTF-8 as U+FFFD.
func appendValid(b, s []byte) []byte {
	if utf8.Valid(s) {
		return append(b, s...)
	}
	for len(s) > 0 {
		r, size := utf8.DecodeRune(s)
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[:size]...)
		}
		s = s[size:]
	}
	return b
}

// hex4 reads four hex digits the parser checked.
func hex4(h []byte) rune {
	var r rune
	for _, c := range h {
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

type parser struct {
	data []byte
	i    int
	slab []node // nodes are allocated in blocks
	// keys holds each plain member name once: an envelope repeats a few
	// names thousands of times.
	keys map[string]string
}

// key returns the member name k, a string node.
func (p *parser) key(k *node) string {
	if !k.plain {
		return k.str()
	}
	raw := k.raw[1 : len(k.raw)-1]
	if s, ok := p.keys[string(raw)]; ok {
		return s
	}
	if p.keys == nil {
		p.keys = make(map[string]string)
	}
	s := string(raw)
	p.keys[s] = s
	return s
}

// node returns a new node of the given kind.
func (p *parser) node(kind byte) *node {
	if len(p.slab) == cap(p.slab) {
		p.slab = make([]node, 0, 256)
	}
	p.slab = p.slab[:len(p.slab)+1]
	n := &p.slab[len(p.slab)-1]
	n.kind = kind
	return n
}

// parse parses data as one JSON value, or says where it breaks.
func parse(data []byte) (*node, *syntaxError) {
	p := &parser{data: data}
	p.space()
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i < len(p.data) {
		return nil, p.fail("unexpected %s after the top-level value", p.char())
	}
	return n, nil
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

func (p *parser) value(depth int) (*node, *syntaxError) {
	if depth > maxDepth {
		return nil, p.fail("nested too deeply")
	}
	if p.i >= len(p.data) {
		return nil, p.fail("unexpected end of input, looking for a value")
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
			return nil, err
		}
		n := p.node('"')
		n.raw, n.plain = p.data[start:p.i], plain
		return n, nil
	case c == '-' || c >= '0' && c <= '9':
		if err := p.number(); err != nil {
			return nil, err
		}
		n := p.node('0')
		n.raw = p.data[start:p.i]
		return n, nil
	case c == 't':
		return p.literal("true", 't')
	case c == 'f':
		return p.literal("false", 'f')
	case c == 'n':
		return p.literal("null", 'n')
	}
	return nil, p.fail("unexpected %s, looking for a value", p.char())
}

func (p *parser) literal(word string, kind byte) (*node, *syntaxError) {
	if !bytes.HasPrefix(p.data[p.i:], []byte(word)) {
		return nil, p.fail("unexpected %s, looking for %s", p.char(), word)
	}
	start := p.i
	p.i += len(word)
	n := p.node(kind)
	n.raw = p.data[start:p.i]
	return n, nil
}

func (p *parser) object(depth int) (*node, *syntaxError) {
	start := p.i
	n := p.node('{')
	p.i++ // {
	p.space()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		n.raw = p.data[start:p.i]
		return n, nil
	}
	for {
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			return nil, p.fail("unexpected %s, looking for a member name", p.char())
		}
		ks := p.i
		plain, err := p.string()
		if err != nil {
			return nil, err
		}
		key := node{kind: '"', raw: p.data[ks:p.i], plain: plain}
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != ':' {
			return nil, p.fail("unexpected %s after a member name, looking for ':'", p.char())
		}
		p.i++
		p.space()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.keys, n.vals = append(n.keys, p.key(&key)), append(n.vals, v)
		p.space()
		if p.i >= len(p.data) {
			return nil, p.fail("unexpected end of input in an object")
		}
		switch p.data[p.i] {
		case ',':
			p.i++
			p.space()
		case '}':
			p.i++
			n.raw = p.data[start:p.i]
			return n, nil
		default:
			return nil, p.fail("unexpected %s in an object, looking for ',' or '}'", p.char())
		}
	}
}

func (p *parser) array(depth int) (*node, *syntaxError) {
	start := p.i
	n := p.node('[')
	p.i++ // [
	p.space()
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
		n.raw = p.data[start:p.i]
		return n, nil
	}
	for {
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.vals = append(n.vals, v)
		p.space()
		if p.i >= len(p.data) {
			return nil, p.fail("unexpected end of input in an array")
		}
		switch p.data[p.i] {
		case ',':
			p.i++
			p.space()
		case ']':
			p.i++
			n.raw = p.data[start:p.i]
			return n, nil
		default:
			return nil, p.fail("unexpected %s in an array, looking for ',' or ']'", p.char())
		}
	}
}

// string scans a string from its opening quote past its closing one, and
// reports whether it is plain: no escapes, valid UTF-8.
func (p *parser) string() (plain bool, err *syntaxError) {
	start := p.i
	p.i++ // "
	plain = true
	for {
		if p.i >= len(p.data) {
			return false, p.fail("unexpected end of input in a string")
		}
		c := p.data[p.i]
		if c == '"' {
			p.i++
			if plain && !utf8.Valid(p.data[start:p.i]) {
				plain = false
			}
			return plain, nil
		}
		if c < 0x20 {
			return false, p.fail("control character %#02x in a string", c)
		}
		if c != '\\' {
			p.i++
			continue
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
