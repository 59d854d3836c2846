package web

import (
	"context"
	"github.com/baton-dev/baton/store"

	"github.com/labstack/echo/v4"
)

// tokenScope is what an API token may do: read only, or read and write.
type tokenScope string

// Token scopes.
const (
	scopeRead  tokenScope = "read"
	scopeWrite tokenScope = "write"
)

// caller is who makes an API or MCP request: the workspace they work in
// (empty: the store's default workspace), the user the token belongs to
// (empty: nobody signed in) and what the token allows. It is the one place
// handlers and MCP tools learn who is asking; authentication sets it with
// withCaller.
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

// callerFrom returns the caller ctx carries. A request that no
// authentication has marked is served as the API always has been without
// accounts: in the default workspace, allowed to write.
func callerFrom(ctx context.Context) caller {
	if c, ok := ctx.Value(callerKey{}).(caller); ok {
		return c
	}
	return caller{Scope: scopeWrite}
}

// errReadOnlyToken answers a write with a read-only token.
var errReadOnlyToken = store.Errorf(store.EFORBIDDEN,
	"This token can only read. Create a token with write scope in Settings → Tokens to post or hand off work.")

// requireWrite refuses the request unless its caller may write.
func requireWrite(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !callerFrom(c.Request().Context()).canWrite() {
			return errReadOnlyToken
		}
		return next(c)
	}
}
