package web

import "context"

// tokenScope is what an API token may do: read only, or read and write.
type tokenScope string

// Token scopes.
const (
	scopeRead  tokenScope = "read"
	scopeWrite tokenScope = "write"
)

// caller is who makes an API or MCP request: the workspace they work in,
// the user the token (or session) belongs to and what they may do. It is
// the one place handlers and MCP tools learn who is asking; authentication
// (setPrincipal) sets it with withCaller.
type caller struct {
	WorkspaceID string
	UserID      string
	Scope       tokenScope
}

// canWrite reports whether the caller may change anything.
func (c caller) canWrite() bool { return c.Scope == scopeWrite }

// callerKey is the context key of a caller.
type callerKey struct{}

// withCaller returns a copy of ctx that carries c.
func withCaller(ctx context.Context, c caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// noWorkspace is the workspace of a caller who has none: an id no
// workspace has, so that every lookup answers not found and every list is
// empty. It is never "", which the store reads as the default workspace.
const noWorkspace = "-"

// callerFrom returns the caller ctx carries. A request that no
// authentication has marked, or whose principal belongs to no workspace,
// is nobody: it may only read, and only in noWorkspace, so it never acts
// in (or sees) the default workspace.
func callerFrom(ctx context.Context) caller {
	c, ok := ctx.Value(callerKey{}).(caller)
	if !ok {
		return caller{WorkspaceID: noWorkspace, Scope: scopeRead}
	}
	if c.WorkspaceID == "" {
		c.WorkspaceID, c.Scope = noWorkspace, scopeRead
	}
	return c
}
