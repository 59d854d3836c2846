package envelope

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// tree is a parsed JSON text. Decode parses an envelope once into a tree
// and reads every field from it, so that a large string (a plan's
// markdown) is scanned once instead of once per level of encoding/json's
// nested Unmarshal calls.
//
// The text of the nodes and member names is in src, one string copy of
// the input, so that reading a plain string (no escapes, valid UTF-8) or a
// member name allocates nothing. The nodes hold offsets, not pointers, so
// that the garbage collector has nothing to scan in them and moving them
// costs no write barriers.
type tree struct {
	src  string
	root node
	// blocks hold the children of every container, each container's in a
	// row in one block.
	blocks [][]node
	keys   []string // member names that have escapes, unquoted
	// spare are blocks of a tree parsed before, to fill again; stack is
	// the parser's, kept for the next.
	spare [][]node
	stack []node
}

// trees keeps parsed trees' blocks for the next parse: they hold no
// pointers, and Decode is done with a tree when it returns.
var trees = sync.Pool{New: func() any { return new(tree) }}

// release gives t's memory to the next parse; t may not be used after.
func (t *tree) release() {
	for i := range t.blocks {
		t.blocks[i] = t.blocks[i][:0]
	}
	*t = tree{spare: append(t.blocks, t.spare...), stack: t.stack[:0]}
	trees.Put(t)
}

// block returns an empty block for at least k nodes: a spare one if one is
// big enough. Blocks grow from 256 nodes to 4096.
func (t *tree) block(k int) []node {
	size := max(k, 256<<min(len(t.blocks), 4))
	for len(t.spare) > 0 {
		b := t.spare[0]
		t.spare = t.spare[1:]
		if cap(b) >= size {
			return b
		}
	}
	return make([]node, 0, size)
}

// node is a parsed JSON value: its kind, its text, and for an object its
// members in order, for an array its items. Offsets are int32: Decode
// parses at most MaxBytes.
type node struct {
	kind  byte // '{', '[', '"', '0' (a number), 't', 'f', 'n' (null)
	plain bool // strings: no escapes and valid UTF-8, so the text less its quotes is the value
	ascii bool // strings: the text is ASCII (escapes aside)
	// start and end delimit the text in src.
	start, end int32
	// key and keyEnd delimit the member name of an object's member value
	// in src, or, when keyEnd is negative, key is its index in keys.
	key, keyEnd int32
	// block, first and n are where a container's children are:
	// blocks[block][first:first+n].
	block, first, n int32
}

// raw returns n's JSON text.
func (t *tree) raw(n *node) string { return t.src[n.start:n.end] }

// str returns a string node's value.
func (t *tree) str(n *node) string {
	if n.plain {
		return t.src[n.start+1 : n.end-1]
	}
	return unquote(t.src[n.start+1:n.end-1], n.ascii)
}

// key returns the member name of a member value.
func (t *tree) key(n *node) string {
	if n.keyEnd < 0 {
		return t.keys[n.key]
	}
	return t.src[n.key:n.keyEnd]
}

// kids returns a container's members or items.
func (t *tree) kids(n *node) []node {
	if n.n == 0 {
		return nil
	}
	return t.blocks[n.block][n.first : n.first+n.n]
}

// member returns the value of the last member of the object n named key
// (the one encoding/json would keep), or nil.
func (t *tree) member(n *node, key string) *node {
	kids := t.kids(n)
	for i := len(kids) - 1; i >= 0; i-- {
		if t.key(&kids[i]) == key {
			return &kids[i]
		}
	}
	return nil
}

// unquote decodes the inside of a JSON string the parser checked, as
// encoding/json does: escapes decoded, invalid UTF-8 and lone surrogates
// replaced by U+FFFD. ascii says s is ASCII, so valid UTF-8.
func unquote(s string, ascii bool) string {
	var b strings.Builder
	b.Grow(len(s)) // escapes shorten a string; only invalid UTF-8 lengthens it
	for len(s) > 0 {
		j := strings.IndexByte(s, '\\')
		if j < 0 {
			j = len(s)
		}
		if ascii {
			b.WriteString(s[:j])
		} else {
			writeValid(&b, s[:j])
		}
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

// parser reads JSON text into a tree. The members and items of the
// containers it is inside collect on stack; when a container closes they
// move, in a row, to one of the tree's blocks.
type parser struct {
	data []byte
	i    int
	// quote and bslash are the index of the next '"' and '\\' from i on
	// (len(data) when there is none), once they are looked for.
	quote, bslash int
	stack         []node
	t             *tree
}

// parse parses data as one JSON value, or says where it breaks. The tree's
// text is a string copy of data, made once. Release the tree when done
// with its nodes.
func parse(data []byte) (*tree, *syntaxError) {
	t := trees.Get().(*tree)
	t.src = string(data)
	p := &parser{data: data, quote: -1, bslash: -1, t: t, stack: t.stack}
	p.space()
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i < len(p.data) {
		return nil, p.fail("unexpected %s after the top-level value", p.char())
	}
	t.root, t.stack = n, p.stack[:0]
	return t, nil
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

// close moves the nodes on the stack from mark on, the children of the
// container c, to the tree's last block, or a new one when they do not
// fit.
func (p *parser) close(c *node, mark int) {
	t, k := p.t, len(p.stack)-mark
	last := len(t.blocks) - 1
	if last < 0 || cap(t.blocks[last])-len(t.blocks[last]) < k {
		t.blocks = append(t.blocks, t.block(k))
		last++
	}
	b := t.blocks[last]
	c.block, c.first, c.n = int32(last), int32(len(b)), int32(k)
	t.blocks[last] = append(b, p.stack[mark:]...)
	p.stack = p.stack[:mark]
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
		plain, ascii, err := p.string()
		if err != nil {
			return node{}, err
		}
		return node{kind: '"', start: int32(start), end: int32(p.i), plain: plain, ascii: ascii}, nil
	case c == '-' || c >= '0' && c <= '9':
		if err := p.number(); err != nil {
			return node{}, err
		}
		return node{kind: '0', start: int32(start), end: int32(p.i)}, nil
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
	if !bytes.HasPrefix(p.data[p.i:], []byte(word)) {
		return node{}, p.fail("unexpected %s, looking for %s", p.char(), word)
	}
	start := p.i
	p.i += len(word)
	return node{kind: kind, start: int32(start), end: int32(p.i)}, nil
}

func (p *parser) object(depth int) (node, *syntaxError) {
	start := p.i
	p.i++ // {
	p.space()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		return node{kind: '{', start: int32(start), end: int32(p.i)}, nil
	}
	mark := len(p.stack)
	for {
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			return node{}, p.fail("unexpected %s, looking for a member name", p.char())
		}
		ks := p.i
		plain, ascii, err := p.string()
		if err != nil {
			return node{}, err
		}
		key, keyEnd := int32(ks+1), int32(p.i-1)
		if !plain {
			key, keyEnd = int32(len(p.t.keys)), -1
			p.t.keys = append(p.t.keys, unquote(p.t.src[ks+1:p.i-1], ascii))
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
		v.key, v.keyEnd = key, keyEnd
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
			n := node{kind: '{', start: int32(start), end: int32(p.i)}
			p.close(&n, mark)
			return n, nil
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
		return node{kind: '[', start: int32(start), end: int32(p.i)}, nil
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
			n := node{kind: '[', start: int32(start), end: int32(p.i)}
			p.close(&n, mark)
			return n, nil
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
// reports whether it is plain (no escapes, valid UTF-8) and whether its
// text is ASCII. It finds the quotes and backslashes that end runs of
// plain text with bytes.IndexByte, remembering the next of each across
// strings.
func (p *parser) string() (plain, ascii bool, err *syntaxError) {
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
			return false, false, p.fail("control character %#02x in a string", p.data[p.i])
		}
		if p.i >= len(p.data) {
			return false, false, p.fail("unexpected end of input in a string")
		}
		if p.data[p.i] == '"' {
			p.i++
			ascii = high&lanesHigh == 0
			if plain && !ascii && !utf8.Valid(p.data[start:p.i]) {
				plain = false
			}
			return plain, ascii, nil
		}
		plain = false
		p.i++ // backslash
		if p.i >= len(p.data) {
			return false, false, p.fail("unexpected end of input in a string")
		}
		switch p.data[p.i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			p.i++
		case 'u':
			if p.i+5 > len(p.data) {
				p.i = len(p.data)
				return false, false, p.fail("unexpected end of input in a string")
			}
			for _, c := range p.data[p.i+1 : p.i+5] {
				if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
					return false, false, p.fail("invalid \\u escape in a string")
				}
			}
			p.i += 5
		default:
			return false, false, p.fail("invalid escape %s in a string", p.char())
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
