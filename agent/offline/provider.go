// Package offline is Baton's embedded provider: deterministic rules and
// templates, no network and no API key. As a brainstorm partner it replies
// with an honest digest of the conversation; it extracts with rules.
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
