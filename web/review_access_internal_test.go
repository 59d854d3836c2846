package web

import (
	"context"
	"testing"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/views"
)

func TestCan(t *testing.T) {
	all := []action{actComment, actReview, actRequestReview, actShare, actReplan}
	for _, tt := range []struct {
		name    string
		st      views.RequestState
		allowed []action
	}{
		{"local owner (no accounts)", views.RequestState{}, all},
		{"owner", views.RequestState{UserID: "u1", Role: roleOwner}, all},
		{"editor", views.RequestState{UserID: "u1", Role: roleEditor}, all},
		{"viewer", views.RequestState{UserID: "u1", Role: roleViewer}, []action{actComment, actReview}},
		{"share page", views.RequestState{ReadOnly: true}, nil},
		{"unknown role", views.RequestState{UserID: "u1", Role: "member"}, nil},
	} {
		ctx := views.WithRequestState(context.Background(), tt.st)
		for _, a := range all {
			want := false
			for _, ok := range tt.allowed {
				want = want || ok == a
			}
			if got := can(ctx, a); got != want {
				t.Errorf("%s: can(%d)=%v, want %v", tt.name, a, got, want)
			}
			if err := requireCan(ctx, a); (err == nil) != want || (err != nil && store.ErrorCode(err) != store.EFORBIDDEN) {
				t.Errorf("%s: requireCan(%d)=%v", tt.name, a, err)
			}
		}
	}
}

func TestActor(t *testing.T) {
	if got, want := actor(context.Background()), (store.Actor{Name: "You"}); got != want {
		t.Errorf("actor without accounts=%+v, want %+v", got, want)
	}
	ctx := views.WithRequestState(context.Background(), views.RequestState{UserID: "u-ana", UserName: "Ana"})
	if got, want := actor(ctx), (store.Actor{UserID: "u-ana", Name: "Ana"}); got != want {
		t.Errorf("actor=%+v, want %+v", got, want)
	}
}
