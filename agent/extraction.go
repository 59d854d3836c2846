package agent

import (
	"encoding/json"

	"github.com/baton-dev/baton/store"
)

// Extraction is what "Ready to plan" takes from a brainstorm. Its JSON names
// are a contract shared with the eval scorer and other programs.
type Extraction struct {
	Decisions       []ExtractedDecision `json:"decisions"`
	FilesReferenced []ExtractedFile     `json:"filesReferenced"`
	Risks           []ExtractedRisk     `json:"risks"`
	Summary         string              `json:"summary"`
	// Usage is what a model extraction cost (zero for offline rules). It is
	// set even when the model's answer failed the schema: the tokens were spent.
	Usage Usage `json:"-"`
}

// ExtractedDecision is a decision the team reached. Sources are indexes into
// the transcript that was extracted (0-based), naming the messages it came from.
type ExtractedDecision struct {
	Content    string  `json:"content"`
	Confidence float64 `json:"confidence"`
	Sources    []int   `json:"sources"`
}

// Relevance of a file to the work: high, medium or low.
type Relevance string

// Relevance levels.
const (
	RelevanceHigh   Relevance = "high"
	RelevanceMedium Relevance = "medium"
	RelevanceLow    Relevance = "low"
)

// ExtractedFile is a file the work touches, with why.
type ExtractedFile struct {
	Path      string    `json:"path"`
	Relevance Relevance `json:"relevance"`
	Context   string    `json:"context"`
	Sources   []int     `json:"sources"`
}

// Severity of a risk: high, medium or low.
type Severity string

// Severity levels.
const (
	SeverityHigh   Severity = "high"
	SeverityMedium Severity = "medium"
	SeverityLow    Severity = "low"
)

// ExtractedRisk is a concern raised in the brainstorm.
type ExtractedRisk struct {
	Description string   `json:"description"`
	Severity    Severity `json:"severity"`
	Mitigation  string   `json:"mitigation"`
	Sources     []int    `json:"sources"`
}

// TranscriptMessage is one message of a transcript given to an extractor.
type TranscriptMessage struct {
	Role    Role   `json:"role"`
	Content string `json:"content"`
}

// MarshalJSON writes empty lists as [] rather than null, so that the JSON
// always matches the extraction schema.
func (x Extraction) MarshalJSON() ([]byte, error) {
	type plain Extraction
	p := plain(x)
	p.Decisions = nonNil(p.Decisions)
	p.FilesReferenced = nonNil(p.FilesReferenced)
	p.Risks = nonNil(p.Risks)
	for i := range p.Decisions {
		p.Decisions[i].Sources = nonNil(p.Decisions[i].Sources)
	}
	for i := range p.FilesReferenced {
		p.FilesReferenced[i].Sources = nonNil(p.FilesReferenced[i].Sources)
	}
	for i := range p.Risks {
		p.Risks[i].Sources = nonNil(p.Risks[i].Sources)
	}
	return json.Marshal(p)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Transcript turns a thread's stored messages, oldest first, into the
// transcript an extraction reads: failed and empty messages are left out.
// ids holds the message ID of each transcript entry, for MergeFrom.
func Transcript(msgs []*store.Message) (transcript []TranscriptMessage, ids []string) {
	for _, m := range msgs {
		if m.Status == store.StatusFailed || m.Content == "" {
			continue
		}
		transcript = append(transcript, TranscriptMessage{Role: Role(m.Role), Content: m.Content})
		ids = append(ids, m.ID)
	}
	return transcript, ids
}

// MergeFrom turns an extraction of a transcript into the merge a handoff
// takes, mapping transcript positions to the message IDs Transcript
// returned with it. The merge counts the extraction's tokens.
func MergeFrom(ex Extraction, ids []string) store.ExtractionMerge {
	msgIDs := func(sources []int) []string {
		var out []string
		for _, i := range sources {
			if i >= 0 && i < len(ids) {
				out = append(out, ids[i])
			}
		}
		return out
	}
	m := store.ExtractionMerge{Summary: ex.Summary, InputTokens: ex.Usage.InputTokens, OutputTokens: ex.Usage.OutputTokens}
	for _, d := range ex.Decisions {
		c := d.Confidence
		m.Decisions = append(m.Decisions, store.DecisionCreate{Content: d.Content, Confidence: &c, MessageIDs: msgIDs(d.Sources)})
	}
	for _, f := range ex.FilesReferenced {
		m.Files = append(m.Files, store.FileRefInput{Path: f.Path, Relevance: store.Level(f.Relevance), Context: f.Context, MessageIDs: msgIDs(f.Sources)})
	}
	for _, r := range ex.Risks {
		m.Risks = append(m.Risks, store.RiskInput{Description: r.Description, Severity: store.Level(r.Severity), Mitigation: r.Mitigation, MessageIDs: msgIDs(r.Sources)})
	}
	return m
}
