// Package offline is Baton's embedded provider: deterministic rules and
// templates, no network and no API key. It extracts by reading the
// brainstorm as a dialogue (see dialogue.go): proposals, and what the user
// accepts, rejects and reverses of them. As a brainstorm partner it answers
// the latest message with what it heard there and one question it has not
// asked before; as a planner it orders the handoff's decisions into steps.
package offline

import (
	"github.com/baton-dev/baton/agent"
)

// Provider is the offline provider. The zero value is not usable; call New.
type Provider struct{}

// New returns the offline provider.
func New() *Provider { return &Provider{} }

// Name returns "offline".
func (p *Provider) Name() string { return "offline" }

// Model returns "offline-digest".
func (p *Provider) Model() string { return "offline-digest" }

var _ agent.Provider = (*Provider)(nil)
var _ agent.Extractor = (*Provider)(nil)
