package views_test

import (
	"context"
	"strings"
	"testing"

	"github.com/baton-dev/baton/static"
	"github.com/baton-dev/baton/views"
)

func TestRequestState(t *testing.T) {
	if got := views.RequestStateFrom(context.Background()); got != (views.RequestState{}) {
		t.Fatalf("RequestStateFrom(empty ctx)=%+v, want the zero value", got)
	}
	want := views.RequestState{CSRF: "tok", UserID: "u1", UserName: "Ada", WorkspaceID: "w1", WorkspaceName: "Acme", Role: "owner", ReadOnly: true}
	ctx := views.WithRequestState(context.Background(), want)
	if got := views.RequestStateFrom(ctx); got != want {
		t.Fatalf("RequestStateFrom=%+v, want %+v", got, want)
	}
	if got := views.CSRF(ctx); got != "tok" {
		t.Fatalf("CSRF=%q, want %q", got, "tok")
	}
}

// TestPageWithoutRequestState checks that a page rendered outside a
// request (no state in its context) carries no token, and one inside
// carries it in the form and the htmx headers.
func TestPageWithoutRequestState(t *testing.T) {
	m := views.Meta{Title: "Brainstorms", Provider: "offline", Model: "m", Assets: static.New()}
	tests := []struct {
		name  string
		ctx   context.Context
		token string
	}{
		{name: "no state", ctx: context.Background(), token: ""},
		{name: "state", ctx: views.WithRequestState(context.Background(), views.RequestState{CSRF: "tok"}), token: "tok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := views.HomePage(m, nil, nil).Render(tt.ctx, &b); err != nil {
				t.Fatal(err)
			}
			page := b.String()
			for _, want := range []string{
				`<input type="hidden" name="_csrf" value="` + tt.token + `">`,
				`hx-headers="{&#34;X-CSRF-Token&#34;:&#34;` + tt.token + `&#34;}"`,
			} {
				if !strings.Contains(page, want) {
					t.Fatalf("page lacks %s:\n%s", want, page)
				}
			}
		})
	}
}
