package agent

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/baton-dev/baton/store"
)

// maxMemoryTerms is how many words of a conversation rankMemory looks up.
const maxMemoryTerms = 24

// maxFilesInPlay bounds the files whose relationships rankMemory returns.
const maxFilesInPlay = 3

// maxFilesConsidered bounds the files rankMemory reads per workspace.
const maxFilesConsidered = 500

// memory is the workspace memory ranked for a conversation.
type memory struct {
	decisions []*store.DecisionRecord // active only: matches first, then the newest
	risks     []*store.Learning       // one per risk: matches first, then the newest
	files     []store.FileActivity    // files in play, then matching, then most touched
	// fileLinks are the relationships of the files in play (the files the
	// query names, else the top files), with active decisions only.
	fileLinks []*store.FileRelationships
}

// rankMemory ranks the workspace's memory for a conversation, at most limit
// items per section: active decision records and risks, those matching any
// of the conversation's last maxMemoryTerms search terms first (best match
// first), then the newest; and the files the workspace touches, those the
// conversation names (the files in play) first, then those whose reasons
// match it, then the most touched. Superseded decisions are never returned.
func rankMemory(ctx context.Context, db MemoryReader, ws, query string, limit int) (*memory, error) {
	terms := searchTerms(query, maxMemoryTerms)
	m := &memory{}
	var err error
	if m.decisions, err = rankedDecisions(ctx, db, ws, terms, limit); err != nil {
		return nil, fmt.Errorf("rank decisions: %w", err)
	}
	if m.risks, err = rankedRisks(ctx, db, ws, terms, limit); err != nil {
		return nil, fmt.Errorf("rank risks: %w", err)
	}
	if m.files, err = rankedFiles(ctx, db, ws, query, terms, limit); err != nil {
		return nil, fmt.Errorf("rank files: %w", err)
	}
	var inPlay []string
	for _, fa := range m.files {
		if MentionsFile(query, fa.Path) && len(inPlay) < maxFilesInPlay {
			inPlay = append(inPlay, fa.Path)
		}
	}
	if len(inPlay) == 0 {
		for _, fa := range m.files[:min(len(m.files), maxFilesInPlay)] {
			inPlay = append(inPlay, fa.Path)
		}
	}
	for _, p := range inPlay {
		fr, err := db.FindFileRelationships(ctx, ws, p)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("file relationships: %w", err)
		}
		active := fr.Decisions[:0:0]
		for _, d := range fr.Decisions {
			if d.Record != nil && d.Record.Status == store.DecisionActive {
				active = append(active, d)
			}
		}
		fr.Decisions = active
		if len(fr.Decisions) > 0 || len(fr.Risks) > 0 {
			m.fileLinks = append(m.fileLinks, fr)
		}
	}
	return m, nil
}

func rankedDecisions(ctx context.Context, db MemoryReader, ws string, terms []string, limit int) ([]*store.DecisionRecord, error) {
	var out []*store.DecisionRecord
	if len(terms) > 0 {
		var err error
		if out, err = db.FindDecisionRecords(ctx, store.DecisionRecordFilter{WorkspaceID: ws, Terms: terms, AnyTerm: true,
			Status: store.DecisionActive, Limit: limit}); err != nil {
			return nil, err
		}
	}
	if len(out) < limit {
		recent, err := db.FindDecisionRecords(ctx, store.DecisionRecordFilter{WorkspaceID: ws, Status: store.DecisionActive,
			Limit: limit + len(out)})
		if err != nil {
			return nil, err
		}
		out = appendNew(out, recent, limit, func(r *store.DecisionRecord) string { return r.ID })
	}
	return out, nil
}

func rankedRisks(ctx context.Context, db MemoryReader, ws string, terms []string, limit int) ([]*store.Learning, error) {
	// Several snapshots may teach the same risk; ask for more to fill the limit.
	var out []*store.Learning
	key := func(l *store.Learning) string { return sameRisk(l.Content) }
	if len(terms) > 0 {
		found, err := db.FindLearnings(ctx, store.LearningFilter{WorkspaceID: ws, Terms: terms, AnyTerm: true, NoSnippet: true,
			Kind: store.LearningRisk, Limit: 3 * limit})
		if err != nil {
			return nil, err
		}
		out = appendNew(out, found, limit, key)
	}
	if len(out) < limit {
		recent, err := db.FindLearnings(ctx, store.LearningFilter{WorkspaceID: ws, NoSnippet: true, Kind: store.LearningRisk,
			Limit: 3*limit + len(out)})
		if err != nil {
			return nil, err
		}
		out = appendNew(out, recent, limit, key)
	}
	return out, nil
}

// sameRisk folds case, spacing and trailing punctuation, so that two
// snapshots teaching the same risk count once.
func sameRisk(s string) string {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	return strings.TrimRightFunc(s, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) })
}

// appendNew appends the items of more whose key out lacks, up to limit.
func appendNew[T any](out, more []T, limit int, key func(T) string) []T {
	seen := map[string]bool{}
	for _, x := range out {
		seen[key(x)] = true
	}
	for _, x := range more {
		if len(out) >= limit {
			break
		}
		if k := key(x); !seen[k] {
			seen[k] = true
			out = append(out, x)
		}
	}
	return out
}

// rankedFiles orders the workspace's files: those text names first, then
// those whose reasons match terms (best first), then the most touched.
func rankedFiles(ctx context.Context, db MemoryReader, ws, text string, terms []string, limit int) ([]store.FileActivity, error) {
	files, err := db.FindFileActivity(ctx, ws, maxFilesConsidered)
	if err != nil {
		return nil, err
	}
	rank := map[string]int{}
	if len(terms) > 0 {
		found, err := db.FindLearnings(ctx, store.LearningFilter{WorkspaceID: ws, Terms: terms, AnyTerm: true, NoSnippet: true,
			Kind: store.LearningFile, Limit: maxFilesConsidered})
		if err != nil {
			return nil, err
		}
		for _, l := range found {
			if _, ok := rank[l.Path]; !ok {
				rank[l.Path] = len(rank)
			}
		}
	}
	inPlay := map[string]bool{}
	for _, f := range files {
		inPlay[f.Path] = text != "" && MentionsFile(text, f.Path)
	}
	sort.SliceStable(files, func(i, j int) bool {
		a, b := files[i], files[j]
		if inPlay[a.Path] != inPlay[b.Path] {
			return inPlay[a.Path]
		}
		ra, oka := rank[a.Path]
		rb, okb := rank[b.Path]
		if oka != okb {
			return oka
		}
		if oka && ra != rb {
			return ra < rb
		}
		return false // keep most touched, then latest
	})
	return files[:min(len(files), limit)], nil
}
