package views

import "context"

// RequestState is what views know about the request they render for: the
// CSRF token their forms carry and, as accounts and sharing arrive, who is
// asking, in which workspace, and whether the view is read-only. Web sets
// it once per request with WithRequestState; components read it from their
// ctx, so it is never passed by hand. The zero value means "none" or "off"
// in every field: no token, nobody signed in, no workspace, no role, not
// read-only.
type RequestState struct {
	// CSRF is the token that forms and htmx requests send back; empty
	// outside the routes Echo's CSRF middleware guards.
	CSRF string

	// UserID and UserName name the signed-in person; empty when nobody is
	// signed in.
	UserID   string
	UserName string

	// WorkspaceID and WorkspaceName name the workspace the request works
	// in; empty when it has none.
	WorkspaceID   string
	WorkspaceName string

	// Role is the signed-in person's role in the workspace (for example
	// "owner" or "member"); empty when there is no signed-in person.
	Role string

	// ReadOnly is set for shared views: they show the work but offer no
	// way to change it.
	ReadOnly bool
}

// requestStateKey is the context key of a RequestState. Being unexported,
// only this package's accessors can set or read it.
type requestStateKey struct{}

// WithRequestState returns a copy of ctx that carries st.
func WithRequestState(ctx context.Context, st RequestState) context.Context {
	return context.WithValue(ctx, requestStateKey{}, st)
}

// RequestStateFrom returns the state ctx carries, or the zero RequestState
// when it carries none.
func RequestStateFrom(ctx context.Context) RequestState {
	st, _ := ctx.Value(requestStateKey{}).(RequestState)
	return st
}

// CSRF returns the CSRF token ctx carries, or "" when it carries none.
func CSRF(ctx context.Context) string {
	return RequestStateFrom(ctx).CSRF
}
