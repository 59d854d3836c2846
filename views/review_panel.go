package views

import (
	"context"
	"net/url"

	"github.com/baton-dev/baton/store"
)

// ReviewPanel is what the team-review parts of a handoff's pages show:
// comment counts on each item, threads, reviews, links, activity. Web
// gathers it per request and puts it into the request's context with
// WithReviewPanel, so that the item components of the review and plan
// pages show their comment buttons without new parameters; a component
// rendered without one shows none.
type ReviewPanel struct {
	HandoffID string
	// Base is where comment routes live: "/h/{id}" for members,
	// "/s/{token}" on a shared page.
	Base string
	// LiveURL is the page's event stream; empty for no live updates.
	LiveURL string
	// StyleURL and ScriptURL are review.css and live.js.
	StyleURL, ScriptURL string
	// Counts are the comment counts by store.Anchor.Key.
	Counts map[string]store.CommentCount

	// The rest is filled for full pages only.
	Overview  []CommentView // open threads in document order
	General   []CommentView // general threads of the page (handoff or plan)
	Reviewers []*store.ReviewerState
	Members   []Member // whom review can be requested of
	Activity  []*store.Activity
	Shares    []*store.ShareLink
	// NewShare is a link just made, shown once with its token.
	NewShare *NewShare
	// ChangesRequested makes "Start planning" warn.
	ChangesRequested bool

	// What the viewer may do.
	CanComment, CanReview, CanRequestReview, CanShare, CanReplan bool
	// Plan is what the plan page adds; nil on other pages.
	Plan *PlanExtrasView
	// Guest is set on a review link: comments ask for a name.
	Guest bool
}

// NewShare is a link just made: its address holds the token, shown once.
type NewShare struct {
	URL  string
	Link *store.ShareLink
}

// Member is someone review can be requested of.
type Member struct {
	UserID string
	Name   string
	Role   string
}

// CommentView is a comment with its body rendered, and its replies.
type CommentView struct {
	*store.Comment
	HTML    string
	Mine    bool // the viewer wrote it: they may edit and delete it
	Replies []CommentView
	// Href points at what the thread is about on the page.
	Href string
}

// ThreadView is an anchor's threads, opened inline under it.
type ThreadView struct {
	Base    string
	Anchor  store.Anchor
	Threads []CommentView
	// Editing is the id of a comment shown in edit mode.
	Editing    string
	CanComment bool
	Guest      bool
}

// threadKey is the HTML id suffix of an anchor's thread.
func threadKey(a store.Anchor) string { return a.Key() }

// anchorQuery is an anchor as query parameters.
func anchorQuery(a store.Anchor) string {
	// The order of url.Values.Encode (keys sorted), built without the map.
	var q string
	if a.ID != "" {
		q = "id=" + url.QueryEscape(a.ID) + "&"
	}
	q += "kind=" + url.QueryEscape(string(a.Kind))
	if a.Section != "" {
		q += "&section=" + url.QueryEscape(a.Section)
	}
	return q
}

type reviewPanelKey struct{}

// WithReviewPanel returns a copy of ctx that carries p.
func WithReviewPanel(ctx context.Context, p *ReviewPanel) context.Context {
	return context.WithValue(ctx, reviewPanelKey{}, p)
}

// ReviewPanelFrom returns the panel ctx carries, or nil.
func ReviewPanelFrom(ctx context.Context) *ReviewPanel {
	p, _ := ctx.Value(reviewPanelKey{}).(*ReviewPanel)
	return p
}

// itemAnchor is the anchor of a review-screen item ("decisions", "files"
// or "risks" and its id).
func itemAnchor(kind, id string) store.Anchor {
	switch kind {
	case "decisions":
		return store.Anchor{Kind: store.AnchorDecision, ID: id}
	case "files":
		return store.Anchor{Kind: store.AnchorFile, ID: id}
	}
	return store.Anchor{Kind: store.AnchorRisk, ID: id}
}
