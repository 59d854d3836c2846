package envelope

import (
	"encoding/json"
	"io"
	"math"
	"strconv"
	"unicode/utf8"
)

// snapshotChunk is how many bytes of canonical JSON writeSnapshotJSON
// gathers before it writes them to the hash.
const snapshotChunk = 16 << 10

// writeSnapshotJSON writes the canonical JSON of the snapshot b describes
// to w: exactly the bytes json.Marshal(b.SnapshotPayload()) writes, which
// the store hashed when it froze the snapshot, without building the
// payload and encoding it by reflection. Strings and numbers whose encoding
// is not plain (escapes, HTML characters, invalid UTF-8, exponents) are
// left to encoding/json, so the two cannot disagree. It encodes into dst
// and writes it out every snapshotChunk bytes, so that w (a hash) reads
// them while they are in the processor's cache; it returns dst, emptied,
// for the next use.
func (b *BrainstormHandoff) writeSnapshotJSON(w io.Writer, dst []byte) ([]byte, error) {
	spill := func(dst []byte) []byte {
		if len(dst) < snapshotChunk {
			return dst
		}
		w.Write(dst)
		return dst[:0]
	}
	dst = append(dst, `{"handoffId":`...)
	dst = appendJSONString(dst, b.HandoffID)
	dst = append(dst, `,"threadId":`...)
	dst = appendJSONString(dst, b.ThreadID)
	dst = append(dst, `,"summary":`...)
	dst = appendJSONString(dst, b.Summary)
	dst = append(dst, `,"decisions":[`...)
	for i, d := range b.Decisions {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"label":`...)
		dst = appendJSONString(dst, d.Label)
		dst = append(dst, `,"id":`...)
		dst = appendJSONString(dst, d.ID)
		dst = append(dst, `,"content":`...)
		dst = appendJSONString(dst, d.Content)
		dst = append(dst, `,"source":`...)
		dst = appendJSONString(dst, d.Source)
		if d.Confidence != nil {
			var err error
			dst = append(dst, `,"confidence":`...)
			if dst, err = appendJSONFloat(dst, *d.Confidence); err != nil {
				return nil, err
			}
		}
		dst = append(dst, `,"messageIds":[`...)
		for j, id := range d.MessageIDs {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, id)
		}
		dst = append(dst, "]}"...)
		dst = spill(dst)
	}
	dst = append(dst, `],"filesReferenced":[`...)
	for i, f := range b.FilesReferenced {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"id":`...)
		dst = appendJSONString(dst, f.ID)
		dst = append(dst, `,"path":`...)
		dst = appendJSONString(dst, string(f.Path))
		dst = append(dst, `,"relevance":`...)
		dst = appendJSONString(dst, f.Relevance)
		dst = append(dst, `,"context":`...)
		dst = appendJSONString(dst, f.Context)
		dst = append(dst, '}')
		dst = spill(dst)
	}
	dst = append(dst, `],"risks":[`...)
	for i, r := range b.Risks {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"id":`...)
		dst = appendJSONString(dst, r.ID)
		dst = append(dst, `,"description":`...)
		dst = appendJSONString(dst, r.Description)
		dst = append(dst, `,"severity":`...)
		dst = appendJSONString(dst, r.Severity)
		if r.Mitigation != "" {
			dst = append(dst, `,"mitigation":`...)
			dst = appendJSONString(dst, r.Mitigation)
		}
		dst = append(dst, '}')
		dst = spill(dst)
	}
	dst = append(dst, `],"frozenAt":`...)
	at, err := b.FrozenAt.MarshalJSON()
	if err != nil {
		return nil, err
	}
	dst = append(dst, at...)
	dst = append(dst, '}')
	w.Write(dst)
	return dst[:0], nil
}

// appendJSONString appends s as encoding/json writes it: quoted as is when
// it needs no escape, else by encoding/json itself. It looks up eight bytes
// at a time while they are plain ASCII.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			t := s[i : i+8]
			if plain[t[0]]&plain[t[1]]&plain[t[2]]&plain[t[3]]&plain[t[4]]&plain[t[5]]&plain[t[6]]&plain[t[7]] != 0 {
				i += 8
				continue
			}
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if plain[c] == 0 {
				return appendMarshaled(dst, s)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			return appendMarshaled(dst, s)
		}
		i += size
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// plain is 1 for the bytes encoding/json writes as they are whatever
// follows: ASCII but control characters, quotes, backslashes and <, >, &
// (which it escapes for HTML).
var plain = func() (t [256]byte) {
	for c := range utf8.RuneSelf {
		if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
			t[c] = 1
		}
	}
	return t
}()

func appendMarshaled(dst []byte, s string) []byte {
	b, _ := json.Marshal(s) // a string always encodes
	return append(dst, b...)
}

// appendJSONFloat appends f as encoding/json writes a float64: plain
// decimals between 1e-6 and 1e21, else by encoding/json itself.
func appendJSONFloat(dst []byte, f float64) ([]byte, error) {
	if abs := math.Abs(f); abs == 0 || abs >= 1e-6 && abs < 1e21 {
		return strconv.AppendFloat(dst, f, 'f', -1, 64), nil
	}
	b, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}
