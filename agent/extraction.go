package agent

// Extraction is what "Ready to plan" takes from a brainstorm. Its JSON names
// are a contract shared with the eval scorer and other programs.
type Extraction struct {
	Decisions       []ExtractedDecision `json:"decisions"`
	FilesReferenced []ExtractedFile     `json:"filesReferenced"`
	Risks           []ExtractedRisk     `json:"risks"`
	Summary         string              `json:"summary"`
}

// ExtractedDecision is a decision the team reached. Sources are indexes into
// the transcript that was extracted (0-based), naming the messages it came from.
type ExtractedDecision struct {
	Content    string  `json:"content"`
	Confidence float64 `json:"confidence"`
	Sources    []int   `json:"sources,omitempty"`
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
	Sources   []int     `json:"sources,omitempty"`
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
	Mitigation  string   `json:"mitigation,omitempty"`
	Sources     []int    `json:"sources,omitempty"`
}

// TranscriptMessage is one message of a transcript given to an extractor.
type TranscriptMessage struct {
	Role    Role   `json:"role"`
	Content string `json:"content"`
}
