// Package adr exports decision records as architecture decision records:
// MADR-style markdown files, one per decision, or a zip of them. It renders
// what the store holds and calls no model.
package adr

import (
	"archive/zip"
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/baton-dev/baton/store"
)

// Options shape an exported architecture decision record.
type Options struct {
	// Number is the ADR's number, shown in the title as ADR-0001; zero
	// leaves it out.
	Number int
	// BaseURL prefixes links to Baton's pages: /h/{handoff},
	// /t/{thread}#msg-{message} and /decisions/{record}. Links are
	// site-relative when it is empty.
	BaseURL string
	// Files maps record IDs to ADR file names, so that supersession links
	// point at files of the same export; Zip sets it.
	Files map[string]string
}

// maxTitleLen is the longest ADR title, in characters.
const maxTitleLen = 80

// Title is the title of a decision's ADR: its first sentence, cut at a
// word to at most 80 characters.
func Title(content string) string {
	t := strings.Join(strings.Fields(content), " ")
	for i, r := range t {
		if (r == '.' || r == '!' || r == '?' || r == ';') && (i+1 == len(t) || t[i+1] == ' ') && i > 0 {
			t = t[:i]
			break
		}
	}
	if utf8.RuneCountInString(t) > maxTitleLen {
		r := []rune(t)[:maxTitleLen-1]
		s := string(r)
		if i := strings.LastIndexByte(s, ' '); i > maxTitleLen/2 {
			s = s[:i]
		}
		t = strings.TrimRight(s, " ,:-") + "…"
	}
	if t == "" {
		return "Decision"
	}
	return t
}

// FileName is the file name of ADR number n: the number on four digits
// and a slug of the title, as in 0001-use-postgres.md.
func FileName(n int, r store.DecisionRecord) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(Title(r.Content)) {
		if c < utf8.RuneSelf && (unicode.IsLetter(c) || unicode.IsDigit(c)) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(c)
			if b.Len() >= 50 {
				break
			}
		} else {
			dash = true
		}
	}
	slug := strings.Trim(b.String(), "-")
	if slug == "" {
		slug = "decision"
	}
	return fmt.Sprintf("%04d-%s.md", n, slug)
}

// Markdown renders a decision record as a MADR-style markdown file:
// front matter (status, date, scope), the title, the context (the summary
// of the snapshot it came from), the decision, its consequences (the files
// it concerns and the risks tied to it) and links to the source handoff and
// messages and to the records it superseded or that superseded it. Give it
// a record from store.DB.FindDecisionRecordByID to have all of these.
func Markdown(r store.DecisionRecord, opts Options) []byte {
	var b bytes.Buffer
	link := func(p string) string {
		if opts.BaseURL == "" {
			return p
		}
		return strings.TrimRight(opts.BaseURL, "/") + p
	}
	recordLink := func(id string) string {
		title := "decision " + id
		for _, c := range r.Chain {
			if c.ID == id {
				title = Title(c.Content)
			}
		}
		if f, ok := opts.Files[id]; ok {
			return fmt.Sprintf("[%s](%s)", mdText(title), f)
		}
		return fmt.Sprintf("[%s](%s)", mdText(title), link("/decisions/"+id))
	}

	status := "accepted"
	if r.Status == store.DecisionSuperseded {
		status = "superseded"
		if f, ok := opts.Files[r.SupersededBy]; ok {
			status = "superseded by " + strings.TrimSuffix(f, ".md")
		} else if r.SupersededBy != "" {
			status = "superseded by decision " + r.SupersededBy
		}
	}
	fmt.Fprintf(&b, "---\nstatus: %s\ndate: %s\nscope: %s\n---\n\n", yamlText(status), r.CreatedAt.UTC().Format(time.DateOnly), yamlText(r.Scope))

	title := mdText(Title(r.Content))
	if opts.Number > 0 {
		title = fmt.Sprintf("ADR-%04d: %s", opts.Number, title)
	}
	fmt.Fprintf(&b, "# %s\n\n", title)

	b.WriteString("## Context and Problem Statement\n\n")
	if s := strings.TrimSpace(r.Summary); s != "" {
		b.WriteString(s + "\n\n")
	}
	fmt.Fprintf(&b, "Decided while brainstorming in Baton (handoff decision %s), for scope `%s`.\n\n", r.Label, r.Scope)

	b.WriteString("## Decision Outcome\n\n")
	b.WriteString(strings.TrimSpace(r.Content) + "\n\n")
	if r.Confidence != nil {
		fmt.Fprintf(&b, "Confidence of the extraction: %s.\n\n", strconv.FormatFloat(*r.Confidence, 'f', -1, 64))
	}
	if r.Status == store.DecisionSuperseded && r.SupersededBy != "" {
		fmt.Fprintf(&b, "This decision no longer holds: it was superseded by %s.\n\n", recordLink(r.SupersededBy))
	}

	b.WriteString("### Consequences\n\n")
	if len(r.Files) == 0 && len(r.Risks) == 0 {
		b.WriteString("* No files or risks were recorded with this decision.\n")
	}
	for _, f := range r.Files {
		fmt.Fprintf(&b, "* Changes `%s` (tied together in %d %s).\n", strings.ReplaceAll(f.Target, "`", ""), f.Count, plural(f.Count, "handoff", "handoffs"))
	}
	for _, k := range r.Risks {
		sev := ""
		if k.Severity != "" {
			sev = " (" + string(k.Severity) + ")"
		}
		fmt.Fprintf(&b, "* Risk%s: %s", sev, mdText(k.Target))
		if k.Mitigation != "" {
			fmt.Fprintf(&b, " Mitigation: %s", mdText(k.Mitigation))
		}
		b.WriteString("\n")
	}

	b.WriteString("\n## More Information\n\n")
	if r.SupersededBy != "" {
		fmt.Fprintf(&b, "* Superseded by: %s\n", recordLink(r.SupersededBy))
	}
	for _, c := range r.Chain {
		if c.SupersededBy == r.ID {
			fmt.Fprintf(&b, "* Supersedes: %s\n", recordLink(c.ID))
		}
	}
	if r.HandoffID != "" {
		fmt.Fprintf(&b, "* Source handoff: [%s](%s)\n", r.HandoffID, link("/h/"+r.HandoffID))
	}
	for _, id := range r.MessageIDs {
		fmt.Fprintf(&b, "* Source message: [%s](%s)\n", id, link("/t/"+r.ThreadID+"#msg-"+id))
	}
	fmt.Fprintf(&b, "* Decision record: %s (snapshot %s)\n", r.ID, r.SnapshotID)
	return b.Bytes()
}

// mdText keeps text on one line, as a title or a list item needs.
func mdText(s string) string { return strings.Join(strings.Fields(s), " ") }

// yamlText quotes a front-matter value when YAML would misread it.
func yamlText(s string) string {
	if s == "" || strings.ContainsAny(s, ":#'\"{}[],&*!|>%@`\n") || strings.TrimSpace(s) != s {
		return strconv.Quote(s)
	}
	return s
}

// Zip renders records as a zip of Markdown files, numbered 0001, 0002,
// … in the order they were decided (oldest first), so that an export reads
// as a log. Supersession links between records of the export point at their
// files. File times are the records' last changes, so the same records make
// the same archive.
func Zip(records []*store.DecisionRecord, opts Options) ([]byte, error) {
	sorted := slices.Clone(records)
	slices.SortStableFunc(sorted, func(a, b *store.DecisionRecord) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	files := map[string]string{}
	for k, v := range opts.Files {
		files[k] = v
	}
	names := make([]string, len(sorted))
	for i, r := range sorted {
		names[i] = FileName(i+1, *r)
		files[r.ID] = names[i]
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i, r := range sorted {
		o := opts
		o.Number, o.Files = i+1, files
		w, err := zw.CreateHeader(&zip.FileHeader{Name: names[i], Method: zip.Deflate, Modified: r.UpdatedAt.UTC()})
		if err != nil {
			return nil, fmt.Errorf("adr zip: %w", err)
		}
		if _, err := w.Write(Markdown(*r, o)); err != nil {
			return nil, fmt.Errorf("adr zip: %w", err)
		}
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("adr zip: %w", err)
	}
	return buf.Bytes(), nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
