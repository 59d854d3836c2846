package views

import (
	"bytes"
	"html"
	"regexp"

	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	highlighting "github.com/yuin/goldmark-highlighting/v2"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
)

// Markdown renders untrusted markdown (messages, model output) to safe
// HTML: GFM through goldmark, code highlighted with CSS classes (no inline
// styles: the CSP forbids them), raw HTML shown as text, images shown as
// links (never loaded), then sanitized by bluemonday. Results are cached by
// source text, so re-rendering an unchanged thread is cheap.
type Markdown struct {
	md     goldmark.Markdown
	policy *bluemonday.Policy
	cache  *HTMLCache
}

const markdownCacheEntries = 4096

// NewMarkdown builds the renderer.
func NewMarkdown() *Markdown {
	md := goldmark.New(
		goldmark.WithExtensions(
			extension.NewTable(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute)),
			extension.Strikethrough, extension.TaskList, extension.Linkify,
			highlighting.NewHighlighting(
				highlighting.WithFormatOptions(chromahtml.WithClasses(true)),
				highlighting.WithGuessLanguage(false),
			),
		),
		goldmark.WithRendererOptions(
			renderer.WithNodeRenderers(util.Prioritized(untrustedRenderer{}, 100)),
		),
	)
	p := bluemonday.NewPolicy()
	p.AllowElements("p", "br", "strong", "em", "del", "code", "pre", "blockquote", "ul", "ol", "li",
		"h1", "h2", "h3", "h4", "h5", "h6", "hr", "table", "thead", "tbody", "tr", "th", "td", "span")
	p.AllowStandardURLs()
	p.AllowAttrs("href").OnElements("a")
	p.RequireNoFollowOnLinks(true)
	p.RequireNoReferrerOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	// Chroma's classes are short lower-case names (k, nf, s2, line, cl).
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^(language-[\w+-]+|image-link|chroma|line|[a-z][a-z0-9]{0,3})$`)).OnElements("code", "pre", "span", "a")
	p.AllowAttrs("align").Matching(regexp.MustCompile(`^(left|right|center)$`)).OnElements("th", "td")
	p.AllowAttrs("type").Matching(regexp.MustCompile(`^checkbox$`)).OnElements("input")
	p.AllowAttrs("checked", "disabled").OnElements("input")
	p.AllowAttrs("start").Matching(bluemonday.Integer).OnElements("ol")
	// The image-link icon (imageIcon); raw HTML never reaches here, so
	// these can only come from the renderer.
	p.AllowElements("svg", "path")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^icon$`)).OnElements("svg")
	p.AllowAttrs("viewbox").Matching(regexp.MustCompile(`^[0-9 ]+$`)).OnElements("svg")
	p.AllowAttrs("aria-hidden").Matching(regexp.MustCompile(`^true$`)).OnElements("svg")
	p.AllowAttrs("d").Matching(regexp.MustCompile(`^[MmHhVvAaZzLlCc0-9 .,-]+$`)).OnElements("path")
	return &Markdown{md: md, policy: p, cache: NewHTMLCache(markdownCacheEntries)}
}

// Render returns sanitized HTML for src.
func (m *Markdown) Render(src string) string {
	if out, ok := m.cache.Get(src); ok {
		return out
	}
	var out string
	var buf bytes.Buffer
	if err := m.md.Convert([]byte(src), &buf); err != nil {
		out = "<p>" + html.EscapeString(src) + "</p>"
	} else {
		out = m.policy.Sanitize(buf.String())
	}
	m.cache.Put(src, out)
	return out
}

// untrustedRenderer overrides goldmark's handling of raw HTML (shown as
// text, not dropped, so people see what was written) and of images (a link
// to the image, so nothing from model output loads by itself).
type untrustedRenderer struct{}

func (untrustedRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindRawHTML, renderRawHTML)
	reg.Register(ast.KindHTMLBlock, renderHTMLBlock)
	reg.Register(ast.KindImage, renderImage)
}

func renderRawHTML(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	segs := n.(*ast.RawHTML).Segments
	for i := 0; i < segs.Len(); i++ {
		s := segs.At(i)
		w.WriteString(html.EscapeString(string(s.Value(source))))
	}
	return ast.WalkSkipChildren, nil
}

func renderHTMLBlock(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	b := n.(*ast.HTMLBlock)
	w.WriteString("<p>")
	lines := b.Lines()
	for i := 0; i < lines.Len(); i++ {
		s := lines.At(i)
		w.WriteString(html.EscapeString(string(s.Value(source))))
	}
	if b.HasClosure() {
		w.WriteString(html.EscapeString(string(b.ClosureLine.Value(source))))
	}
	w.WriteString("</p>\n")
	return ast.WalkContinue, nil
}

func renderImage(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	img := n.(*ast.Image)
	alt := plainText(img, source)
	if alt == "" {
		alt = "image"
	}
	dest := img.Destination
	if !gmhtml.IsDangerousURL(dest) {
		w.WriteString(`<a class="image-link" href="`)
		w.Write(util.EscapeHTML(util.URLEscape(dest, true)))
		w.WriteString(`">`)
	}
	w.WriteString(imageIcon + html.EscapeString(alt))
	if !gmhtml.IsDangerousURL(dest) {
		w.WriteString("</a>")
	}
	return ast.WalkSkipChildren, nil
}

// imageIcon marks an image link: an inline SVG (a picture frame), so that
// it shows without an emoji font. The sanitizer allows exactly this shape.
const imageIcon = `<svg class="icon" viewBox="0 0 16 16" aria-hidden="true">` +
	`<path d="M2 2h12a1 1 0 0 1 1 1v10a1 1 0 0 1-1 1H2a1 1 0 0 1-1-1V3a1 1 0 0 1 1-1zm0 1v7.3l3-3 3 3 2-2 4 4V3H2zm9 1.5a1.5 1.5 0 1 1 0 3 1.5 1.5 0 0 1 0-3z"></path></svg>`

// plainText is the text of a node's descendants, without markup.
func plainText(n ast.Node, source []byte) string {
	var b bytes.Buffer
	ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := c.(*ast.Text); ok && entering {
			b.Write(t.Value(source))
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}
