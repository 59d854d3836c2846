package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestFindSessionWithWorkspaces checks the one-statement read against
// FindSessionBySecret and FindMemberships: a user in no workspace, in one,
// in several (named to test the order), removed from the session's one,
// and an ended session.
func TestFindSessionWithWorkspaces(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "baton.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	u, err := db.CreateUser(ctx, UserCreate{Email: "ana@example.com", Name: "Ana", Password: "correct horse battery"})
	if err != nil {
		t.Fatal(err)
	}
	s, secret, err := db.CreateSession(ctx, SessionCreate{UserID: u.ID, Lifetime: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	check := func(step string) {
		t.Helper()
		wantS, err := db.FindSessionBySecret(ctx, secret)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		wantMs, err := db.FindMemberships(ctx, MembershipFilter{UserID: u.ID})
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		gotS, gotMs, err := db.FindSessionWithWorkspaces(ctx, secret)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if diff := cmp.Diff(wantS, gotS, cmp.AllowUnexported(User{})); diff != "" {
			t.Errorf("%s: session (-FindSessionBySecret +FindSessionWithWorkspaces):\n%s", step, diff)
		}
		if diff := cmp.Diff(wantMs, gotMs); diff != "" {
			t.Errorf("%s: workspaces (-FindMemberships +FindSessionWithWorkspaces):\n%s", step, diff)
		}
	}
	check("in no workspace")

	var ws []*Workspace
	for _, name := range []string{"beta", "Alpha", "alpha", "Zulu", "_under"} {
		w, err := db.CreateWorkspace(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	if err := db.AddMember(ctx, ws[0].ID, u.ID, RoleEditor); err != nil {
		t.Fatal(err)
	}
	check("in one workspace, none chosen")
	if err := db.SetSessionWorkspace(ctx, s.ID, ws[0].ID); err != nil {
		t.Fatal(err)
	}
	check("in one workspace, chosen")
	for _, w := range ws[1:] {
		if err := db.AddMember(ctx, w.ID, u.ID, RoleViewer); err != nil {
			t.Fatal(err)
		}
	}
	check("in several")
	if err := db.RemoveMember(ctx, ws[0].ID, u.ID); err != nil {
		t.Fatal(err)
	}
	check("removed from the session's workspace")

	if err := db.EndSession(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.FindSessionWithWorkspaces(ctx, secret); !errors.Is(err, ErrUnauthorized) {
		t.Errorf("an ended session: err = %v, want ErrUnauthorized", err)
	}
}
