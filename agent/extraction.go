package agent

import "encoding/json"

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
