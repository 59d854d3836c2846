package views

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// maxSentence is the longest sentence FirstSentence returns, in characters.
const maxSentence = 300

// sentenceParser reads markdown for FirstSentence. Parsers keep no state
// between calls.
var sentenceParser = goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser()

// FirstSentence is the first meaningful sentence of a markdown reply, as
// plain text: what a pinned reply becomes as a decision unless the person
// says otherwise. Headings, code, tables, labels ("**Files mentioned**"),
// questions and the assistant talking about itself ("Here is…", "I
// pick out…") are skipped; when nothing is left it falls back to the first
// sentence of any text. It is at most maxSentence characters.
func FirstSentence(markdown string) string {
	src := []byte(markdown)
	doc := sentenceParser.Parse(text.NewReader(src))
	var fallback string
	var found string
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n.Kind() {
		case ast.KindHeading, ast.KindFencedCodeBlock, ast.KindCodeBlock, ast.KindHTMLBlock, ast.KindThematicBreak:
			return ast.WalkSkipChildren, nil
		case ast.KindParagraph, ast.KindTextBlock:
		default:
			if n.Kind().String() == "Table" {
				return ast.WalkSkipChildren, nil
			}
			return ast.WalkContinue, nil
		}
		block := strings.Join(strings.Fields(blockText(n, src)), " ")
		if fallback == "" && block != "" {
			fallback = firstOf(splitSentences(block))
		}
		if isLabel(n, src) {
			return ast.WalkSkipChildren, nil
		}
		for _, s := range splitSentences(stripLabel(n, src, block)) {
			if meaningful(s) {
				found = s
				return ast.WalkStop, nil
			}
		}
		return ast.WalkSkipChildren, nil
	})
	if found == "" {
		found = fallback
	}
	return clip(found, maxSentence)
}

// blockText is the plain text of a block: text, code spans and link text,
// with line breaks as spaces.
func blockText(n ast.Node, src []byte) string {
	var b strings.Builder
	ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(src))
			if c.SoftLineBreak() || c.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(c.Value)
		case *ast.CodeSpan:
			for t := c.FirstChild(); t != nil; t = t.NextSibling() {
				if tx, ok := t.(*ast.Text); ok {
					b.Write(tx.Segment.Value(src))
				}
			}
			return ast.WalkSkipChildren, nil
		case *ast.AutoLink:
			b.Write(c.URL(src))
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// isLabel reports whether a block is only a label: bold text, perhaps with
// a remark in parentheses ("**Offline digest** (no model configured)"), or
// text that ends with a colon ("What changes:").
func isLabel(n ast.Node, src []byte) bool {
	plain := strings.TrimSpace(blockText(n, src))
	if strings.HasSuffix(plain, ":") {
		return true
	}
	first := n.FirstChild()
	if e, ok := first.(*ast.Emphasis); !ok || e.Level < 2 {
		return false
	}
	rest := strings.TrimSpace(strings.TrimPrefix(plain, strings.TrimSpace(blockText(first, src))))
	return rest == "" || (strings.HasPrefix(rest, "(") && strings.HasSuffix(rest, ")"))
}

// stripLabel removes a leading bold label that ends with a colon
// ("**Next:** …") from a block's text.
func stripLabel(n ast.Node, src []byte, block string) string {
	if e, ok := n.FirstChild().(*ast.Emphasis); ok && e.Level >= 2 {
		label := strings.TrimSpace(blockText(e, src))
		if strings.HasSuffix(label, ":") {
			return strings.TrimSpace(strings.TrimPrefix(block, label))
		}
	}
	return block
}

// splitSentences splits text after ., ! or ? (and closing quotes) that
// end a word and are followed by a space.
func splitSentences(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '.' && s[i] != '!' && s[i] != '?' {
			continue
		}
		j := i + 1
		for j < len(s) {
			r, size := utf8.DecodeRuneInString(s[j:])
			if r != '"' && r != '\'' && r != ')' && r != '”' && r != '’' {
				break
			}
			j += size
		}
		if j < len(s) && s[j] != ' ' {
			continue // a dot inside a word: session.ts, e.g.x
		}
		if t := strings.TrimSpace(s[start:j]); t != "" {
			out = append(out, t)
		}
		start, i = j, j
	}
	if t := strings.TrimSpace(s[start:]); t != "" {
		out = append(out, t)
	}
	return out
}

// preambles start sentences in which the assistant talks about itself or
// the conversation rather than about the work.
var preambles = []string{"i ", "i'm ", "i’m ", "i'll ", "i’ll ", "i've ", "i’ve ", "i'd ", "i’d ",
	"here is", "here's", "here’s", "sure", "certainly", "of course", "great", "good question",
	"let me", "let's see", "okay", "ok,", "ok.", "thanks", "thank you", "correct me", "tell me", "feel free"}

// meaningful reports whether a sentence could stand as a decision: a few
// words, not a question, not a preamble.
func meaningful(s string) bool {
	if len(strings.Fields(s)) < 3 {
		return false
	}
	trimmed := strings.TrimRight(s, `"'”’)`)
	if strings.HasSuffix(trimmed, "?") || strings.HasSuffix(trimmed, ":") {
		return false
	}
	lower := strings.ToLower(s)
	for _, p := range preambles {
		if strings.HasPrefix(lower, p) {
			return false
		}
	}
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '`' || r == '"' || r == '“'
}

func firstOf(ss []string) string {
	if len(ss) == 0 {
		return ""
	}
	return ss[0]
}

// clip shortens s to at most n characters, ending with "…" when cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n-1]
	return strings.TrimRightFunc(string(r), unicode.IsSpace) + "…"
}
