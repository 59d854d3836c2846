package store_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
)

const goodPassword = "correct horse battery"

// clock is a settable test clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock(db *store.DB) *clock {
	c := &clock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	db.SetClock(c.Now)
	return c
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func mustUser(t *testing.T, db *store.DB, email string) *store.User {
	t.Helper()
	u, err := db.CreateUser(context.Background(), store.UserCreate{Email: email, Name: strings.Split(email, "@")[0], Password: goodPassword})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func mustMember(t *testing.T, db *store.DB, ws, userID string, role store.MemberRole) {
	t.Helper()
	if err := db.AddMember(context.Background(), ws, userID, role); err != nil {
		t.Fatal(err)
	}
}

func TestPasswordHash(t *testing.T) {
	h := store.HashPassword(goodPassword)
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("hash=%q, want an argon2id PHC string", h)
	}
	if h2 := store.HashPassword(goodPassword); h2 == h {
		t.Fatal("two hashes of one password are equal: the salt is not random")
	}
	for _, tt := range []struct {
		pw   string
		want bool
	}{{goodPassword, true}, {goodPassword + " ", false}, {"", false}} {
		if got, err := store.CheckPassword(h, tt.pw); err != nil || got != tt.want {
			t.Errorf("CheckPassword(%q)=%v, %v; want %v", tt.pw, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "plain", "$argon2i$v=19$m=1,t=1,p=1$AAAA$AAAA", "$argon2id$v=19$m=x$AAAA$AAAA", "$argon2id$v=19$m=8,t=1,p=1$!!$AAAA"} {
		if ok, err := store.CheckPassword(bad, goodPassword); ok || err == nil {
			t.Errorf("CheckPassword(%q)=%v, %v; want false and an error", bad, ok, err)
		}
	}
}

func TestCreateUser(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	u, err := db.CreateUser(ctx, store.UserCreate{Email: "  Ana@Example.com ", Name: "  Ana   Lima ", Password: goodPassword})
	if err != nil {
		t.Fatal(err)
	}
	if u.Email != "Ana@Example.com" || u.Name != "Ana Lima" {
		t.Fatalf("user=%q %q, want trimmed email and name", u.Email, u.Name)
	}
	got, err := db.FindUserByEmail(ctx, "ana@EXAMPLE.com")
	if err != nil || got.ID != u.ID {
		t.Fatalf("FindUserByEmail ignoring case = %v, %v; want %s", got, err, u.ID)
	}

	tests := []struct {
		name string
		in   store.UserCreate
		want error
		msg  string
	}{
		{"duplicate email, other case", store.UserCreate{Email: "ANA@example.COM", Name: "Other", Password: goodPassword}, store.ErrConflict, "already exists"},
		{"short password", store.UserCreate{Email: "b@example.com", Name: "B", Password: "elevenchars"}, store.ErrInvalid, "at least 12"},
		{"no email", store.UserCreate{Name: "B", Password: goodPassword}, store.ErrInvalid, "Enter an email"},
		{"not an email", store.UserCreate{Email: "b example.com", Name: "B", Password: goodPassword}, store.ErrInvalid, "not an email"},
		{"no name", store.UserCreate{Email: "b@example.com", Name: "  ", Password: goodPassword}, store.ErrInvalid, "Enter a name"},
		{"bidi override in name", store.UserCreate{Email: "b@example.com", Name: "B\u202e", Password: goodPassword}, store.ErrInvalid, "control character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := db.CreateUser(ctx, tt.in)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err=%v, want %v saying %q", err, tt.want, tt.msg)
			}
		})
	}
	users, err := db.ListUsers(ctx)
	if err != nil || len(users) != 1 {
		t.Fatalf("ListUsers=%d users, %v; want 1 (nothing created by bad input)", len(users), err)
	}
}

func TestAuthenticateUser(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	u := mustUser(t, db, "ana@example.com")
	got, err := db.AuthenticateUser(ctx, "ANA@example.com", goodPassword)
	if err != nil || got.ID != u.ID {
		t.Fatalf("AuthenticateUser=%v, %v; want %s", got, err, u.ID)
	}
	_, errWrong := db.AuthenticateUser(ctx, "ana@example.com", "wrong password!")
	_, errUnknown := db.AuthenticateUser(ctx, "nobody@example.com", goodPassword)
	for _, err := range []error{errWrong, errUnknown} {
		if !errors.Is(err, store.ErrUnauthorized) {
			t.Fatalf("err=%v, want ErrUnauthorized", err)
		}
	}
	if errWrong.Error() != errUnknown.Error() {
		t.Fatalf("wrong password says %q, unknown email %q: they must not differ", errWrong, errUnknown)
	}
}

func TestSetUp(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	if has, _ := db.HasUsers(ctx); has {
		t.Fatal("HasUsers on a new database = true")
	}
	if _, err := db.SetUp(ctx, store.Setup{Owner: store.UserCreate{Email: "a@example.com", Name: "Ana", Password: "short"}, Workspace: "Acme"}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("SetUp with a weak password: err=%v, want ErrInvalid", err)
	}
	owner, err := db.SetUp(ctx, store.Setup{Owner: store.UserCreate{Email: "a@example.com", Name: "Ana", Password: goodPassword}, Workspace: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := db.FindWorkspaceByID(ctx, db.DefaultWorkspaceID())
	if err != nil || w.Name != "Acme" {
		t.Fatalf("default workspace=%v, %v; want renamed Acme (its threads stay)", w, err)
	}
	m, err := db.FindMembership(ctx, w.ID, owner.ID)
	if err != nil || m.Role != store.RoleOwner {
		t.Fatalf("membership=%v, %v; want owner", m, err)
	}
	if has, _ := db.HasUsers(ctx); !has {
		t.Fatal("HasUsers after set-up = false")
	}
	_, err = db.SetUp(ctx, store.Setup{Owner: store.UserCreate{Email: "b@example.com", Name: "Bo", Password: goodPassword}, Workspace: "Mine"})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second SetUp: err=%v, want ErrConflict", err)
	}
}

func TestSessions(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	clk := newClock(db)
	u := mustUser(t, db, "ana@example.com")
	ws := db.DefaultWorkspaceID()
	mustMember(t, db, ws, u.ID, store.RoleEditor)

	s, secret, err := db.CreateSession(ctx, store.SessionCreate{UserID: u.ID, WorkspaceID: ws, Lifetime: 30 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if len(secret) != 43 || s.ID == secret || strings.Contains(s.ID, secret) {
		t.Fatalf("secret %q (id %q): want 43 base64url characters, stored only hashed", secret, s.ID)
	}
	got, err := db.FindSessionBySecret(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != s.ID || got.User.Email != "ana@example.com" || got.Role != store.RoleEditor || got.WorkspaceName != "Default" {
		t.Fatalf("session=%+v, want its user, role editor and workspace", got)
	}
	if _, err := db.FindSessionBySecret(ctx, secret+"x"); !errors.Is(err, store.ErrUnauthorized) {
		t.Fatalf("wrong secret: err=%v, want ErrUnauthorized", err)
	}

	clk.Add(time.Hour)
	if err := db.TouchSession(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.FindSessionBySecret(ctx, secret); !got.LastSeenAt.Equal(clk.Now()) {
		t.Fatalf("LastSeenAt=%v, want %v", got.LastSeenAt, clk.Now())
	}

	t.Run("absolute lifetime", func(t *testing.T) {
		clk.Add(30 * 24 * time.Hour)
		defer clk.Add(-30 * 24 * time.Hour)
		if _, err := db.FindSessionBySecret(ctx, secret); !errors.Is(err, store.ErrUnauthorized) {
			t.Fatalf("after 30 days: err=%v, want ErrUnauthorized", err)
		}
	})
	t.Run("removed member keeps the session, without a role", func(t *testing.T) {
		other := mustUser(t, db, "bo@example.com")
		mustMember(t, db, ws, other.ID, store.RoleOwner)
		if err := db.RemoveMember(ctx, ws, u.ID); err != nil {
			t.Fatal(err)
		}
		got, err := db.FindSessionBySecret(ctx, secret)
		if err != nil || got.Role != "" || got.WorkspaceID != "" {
			t.Fatalf("session=%+v, %v; want no workspace and no role", got, err)
		}
		mustMember(t, db, ws, u.ID, store.RoleEditor)
	})
	t.Run("end sessions", func(t *testing.T) {
		_, s2, _ := db.CreateSession(ctx, store.SessionCreate{UserID: u.ID, Lifetime: time.Hour})
		_, s3, _ := db.CreateSession(ctx, store.SessionCreate{UserID: u.ID, Lifetime: time.Hour})
		n, err := db.EndUserSessions(ctx, u.ID, s.ID)
		if err != nil || n != 2 {
			t.Fatalf("EndUserSessions=%d, %v; want 2", n, err)
		}
		for _, sec := range []string{s2, s3} {
			if _, err := db.FindSessionBySecret(ctx, sec); !errors.Is(err, store.ErrUnauthorized) {
				t.Fatalf("ended session: err=%v, want ErrUnauthorized", err)
			}
		}
		if _, err := db.FindSessionBySecret(ctx, secret); err != nil {
			t.Fatalf("kept session: %v", err)
		}
		if err := db.EndSession(ctx, s.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.FindSessionBySecret(ctx, secret); !errors.Is(err, store.ErrUnauthorized) {
			t.Fatalf("after EndSession: err=%v, want ErrUnauthorized", err)
		}
	})
}

func TestChangePassword(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	u := mustUser(t, db, "ana@example.com")
	keep, keepSecret, _ := db.CreateSession(ctx, store.SessionCreate{UserID: u.ID, Lifetime: time.Hour})
	_, otherSecret, _ := db.CreateSession(ctx, store.SessionCreate{UserID: u.ID, Lifetime: time.Hour})

	err := db.ChangePassword(ctx, store.PasswordChange{UserID: u.ID, Current: "not the password", New: "a brand new passphrase", KeepSessionID: keep.ID})
	if !errors.Is(err, store.ErrUnauthorized) {
		t.Fatalf("wrong current password: err=%v, want ErrUnauthorized", err)
	}
	err = db.ChangePassword(ctx, store.PasswordChange{UserID: u.ID, Current: goodPassword, New: "short", KeepSessionID: keep.ID})
	if !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("weak new password: err=%v, want ErrInvalid", err)
	}
	if _, err := db.FindSessionBySecret(ctx, otherSecret); err != nil {
		t.Fatalf("a refused change ended a session: %v", err)
	}
	if err := db.ChangePassword(ctx, store.PasswordChange{UserID: u.ID, Current: goodPassword, New: "a brand new passphrase", KeepSessionID: keep.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AuthenticateUser(ctx, u.Email, goodPassword); !errors.Is(err, store.ErrUnauthorized) {
		t.Fatalf("old password still works: %v", err)
	}
	if _, err := db.AuthenticateUser(ctx, u.Email, "a brand new passphrase"); err != nil {
		t.Fatalf("new password: %v", err)
	}
	if _, err := db.FindSessionBySecret(ctx, otherSecret); !errors.Is(err, store.ErrUnauthorized) {
		t.Fatalf("other session after a password change: err=%v, want ErrUnauthorized", err)
	}
	if _, err := db.FindSessionBySecret(ctx, keepSecret); err != nil {
		t.Fatalf("the changing session ended: %v", err)
	}
}

func TestLastOwner(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	ws := db.DefaultWorkspaceID()
	ana, bo := mustUser(t, db, "ana@example.com"), mustUser(t, db, "bo@example.com")
	mustMember(t, db, ws, ana.ID, store.RoleOwner)
	mustMember(t, db, ws, bo.ID, store.RoleViewer)

	if _, err := db.ChangeRole(ctx, ws, ana.ID, store.RoleEditor); !errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), "last owner") {
		t.Fatalf("demote last owner: err=%v, want ErrConflict naming the last owner", err)
	}
	if err := db.RemoveMember(ctx, ws, ana.ID); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("remove last owner: err=%v, want ErrConflict", err)
	}
	if m, _ := db.FindMembership(ctx, ws, ana.ID); m.Role != store.RoleOwner {
		t.Fatalf("role=%s after refused changes, want owner", m.Role)
	}
	if _, err := db.ChangeRole(ctx, ws, bo.ID, "admin"); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("unknown role: err=%v, want ErrInvalid", err)
	}
	if _, err := db.ChangeRole(ctx, ws, "nobody", store.RoleEditor); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("not a member: err=%v, want ErrNotFound", err)
	}
	if m, err := db.ChangeRole(ctx, ws, bo.ID, store.RoleOwner); err != nil || m.Role != store.RoleOwner {
		t.Fatalf("promote: %v, %v", m, err)
	}
	// Two owners: either may step down, not both.
	if _, err := db.ChangeRole(ctx, ws, ana.ID, store.RoleViewer); err != nil {
		t.Fatal(err)
	}
	if err := db.RemoveMember(ctx, ws, bo.ID); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("remove the new last owner: err=%v, want ErrConflict", err)
	}
	if err := db.RemoveMember(ctx, ws, ana.ID); err != nil {
		t.Fatal(err)
	}
	members, _ := db.FindMemberships(ctx, store.MembershipFilter{WorkspaceID: ws})
	if len(members) != 1 || members[0].UserID != bo.ID {
		t.Fatalf("members=%v, want only bo", members)
	}
	if err := db.AddMember(ctx, ws, bo.ID, store.RoleViewer); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("add a member twice: err=%v, want ErrConflict", err)
	}
}

func TestInvites(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	clk := newClock(db)
	ws := db.DefaultWorkspaceID()
	owner := mustUser(t, db, "owner@example.com")
	mustMember(t, db, ws, owner.ID, store.RoleOwner)

	for _, d := range []time.Duration{0, -time.Hour, 7*24*time.Hour + time.Second} {
		if _, _, err := db.CreateInvite(ctx, store.InviteCreate{WorkspaceID: ws, Role: store.RoleViewer, CreatedBy: owner.ID, Lifetime: d}); !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("lifetime %v: err=%v, want ErrInvalid", d, err)
		}
	}
	if _, _, err := db.CreateInvite(ctx, store.InviteCreate{WorkspaceID: ws, Role: "boss", Lifetime: time.Hour}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("bad role: err=%v, want ErrInvalid", err)
	}

	newInvite := func(role store.MemberRole) string {
		t.Helper()
		_, secret, err := db.CreateInvite(ctx, store.InviteCreate{WorkspaceID: ws, Role: role, CreatedBy: owner.ID, Lifetime: 7 * 24 * time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		return secret
	}

	t.Run("existing user joins once", func(t *testing.T) {
		secret := newInvite(store.RoleViewer)
		inv, err := db.FindInviteBySecret(ctx, secret)
		if err != nil || inv.WorkspaceName != "Default" || inv.Role != store.RoleViewer {
			t.Fatalf("FindInviteBySecret=%+v, %v", inv, err)
		}
		bo := mustUser(t, db, "bo@example.com")
		m, err := db.AcceptInvite(ctx, secret, bo.ID)
		if err != nil || m.Role != store.RoleViewer {
			t.Fatalf("AcceptInvite=%v, %v; want viewer", m, err)
		}
		cy := mustUser(t, db, "cy@example.com")
		if _, err := db.AcceptInvite(ctx, secret, cy.ID); !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "used already") {
			t.Fatalf("second use: err=%v, want ErrInvalid saying used", err)
		}
		if _, err := db.FindMembership(ctx, ws, cy.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a used invite made a member: %v", err)
		}
	})
	t.Run("member already", func(t *testing.T) {
		secret := newInvite(store.RoleEditor)
		if _, err := db.AcceptInvite(ctx, secret, owner.ID); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("err=%v, want ErrConflict", err)
		}
		if m, _ := db.FindMembership(ctx, ws, owner.ID); m.Role != store.RoleOwner {
			t.Fatalf("role=%s, want owner unchanged", m.Role)
		}
		if _, err := db.FindInviteBySecret(ctx, secret); err != nil {
			t.Fatalf("a refused acceptance used the invite: %v", err)
		}
	})
	t.Run("new user", func(t *testing.T) {
		secret := newInvite(store.RoleEditor)
		_, _, err := db.AcceptInviteAsNewUser(ctx, secret, store.UserCreate{Email: "OWNER@example.com", Name: "Dup", Password: goodPassword})
		if !errors.Is(err, store.ErrConflict) {
			t.Fatalf("duplicate email: err=%v, want ErrConflict", err)
		}
		if _, err := db.FindInviteBySecret(ctx, secret); err != nil {
			t.Fatalf("a refused sign-up used the invite: %v", err)
		}
		u, m, err := db.AcceptInviteAsNewUser(ctx, secret, store.UserCreate{Email: "dee@example.com", Name: "Dee", Password: goodPassword})
		if err != nil || m.Role != store.RoleEditor || m.UserID != u.ID {
			t.Fatalf("AcceptInviteAsNewUser=%v, %v, %v", u, m, err)
		}
	})
	t.Run("expired", func(t *testing.T) {
		secret := newInvite(store.RoleViewer)
		clk.Add(7 * 24 * time.Hour)
		_, err := db.FindInviteBySecret(ctx, secret)
		if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "expired") {
			t.Fatalf("err=%v, want ErrInvalid saying expired", err)
		}
		if _, _, err := db.AcceptInviteAsNewUser(ctx, secret, store.UserCreate{Email: "late@example.com", Name: "Late", Password: goodPassword}); !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("accept expired: err=%v, want ErrInvalid", err)
		}
		if _, err := db.FindUserByEmail(ctx, "late@example.com"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("an expired invite created an account: %v", err)
		}
	})
	t.Run("unknown and withdrawn", func(t *testing.T) {
		if _, err := db.FindInviteBySecret(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("err=%v, want ErrNotFound", err)
		}
		inv, secret, _ := db.CreateInvite(ctx, store.InviteCreate{WorkspaceID: ws, Role: store.RoleViewer, Lifetime: time.Hour})
		if list, _ := db.FindInvites(ctx, ws); len(list) != 1 || list[0].ID != inv.ID {
			t.Fatalf("FindInvites=%v, want only the live invite", list)
		}
		if err := db.DeleteInvite(ctx, ws, inv.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.FindInviteBySecret(ctx, secret); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("withdrawn: err=%v, want ErrNotFound", err)
		}
	})
	t.Run("one of two at once", func(t *testing.T) {
		secret := newInvite(store.RoleViewer)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			u := mustUser(t, db, []string{"x@example.com", "y@example.com"}[i])
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = db.AcceptInvite(ctx, secret, u.ID)
			}()
		}
		wg.Wait()
		if (errs[0] == nil) == (errs[1] == nil) {
			t.Fatalf("errs=%v, want exactly one acceptance", errs)
		}
	})
}

func TestTokens(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	clk := newClock(db)
	ws := db.DefaultWorkspaceID()
	ana := mustUser(t, db, "ana@example.com")
	mustMember(t, db, ws, ana.ID, store.RoleOwner)

	tok, secret, err := db.CreateToken(ctx, store.TokenCreate{UserID: ana.ID, WorkspaceID: ws, Name: "ci", Scope: store.ScopeRead})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, store.TokenPrefix) || len(secret) != len(store.TokenPrefix)+43 || tok.Last4 != secret[len(secret)-4:] {
		t.Fatalf("secret=%q last4=%q: want baton_ + 43 characters, last 4 kept", secret, tok.Last4)
	}
	got, err := db.FindTokenBySecret(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != tok.ID || got.User.ID != ana.ID || got.Role != store.RoleOwner || got.Scope != store.ScopeRead || got.WorkspaceName != "Default" {
		t.Fatalf("token=%+v", got)
	}
	if _, err := db.FindTokenBySecret(ctx, secret[:len(secret)-1]); !errors.Is(err, store.ErrUnauthorized) {
		t.Fatalf("wrong secret: err=%v, want ErrUnauthorized", err)
	}

	if err := db.TouchToken(ctx, tok.ID); err != nil {
		t.Fatal(err)
	}
	list, err := db.FindTokens(ctx, store.TokenFilter{UserID: ana.ID})
	if err != nil || len(list) != 1 || !list[0].LastUsedAt.Equal(clk.Now()) {
		t.Fatalf("FindTokens=%v, %v; want one, used now", list, err)
	}

	if _, err := db.RevokeToken(ctx, tok.ID, "someone-else"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("revoke another's token: err=%v, want ErrNotFound", err)
	}
	if r, err := db.RevokeToken(ctx, tok.ID, ana.ID); err != nil || r.RevokedAt.IsZero() {
		t.Fatalf("RevokeToken=%v, %v", r, err)
	}
	if _, err := db.FindTokenBySecret(ctx, secret); !errors.Is(err, store.ErrUnauthorized) || !strings.Contains(err.Error(), "revoked") {
		t.Fatalf("revoked: err=%v, want ErrUnauthorized saying revoked", err)
	}

	t.Run("expiry", func(t *testing.T) {
		if _, _, err := db.CreateToken(ctx, store.TokenCreate{UserID: ana.ID, WorkspaceID: ws, Name: "old", Scope: store.ScopeWrite, ExpiresAt: clk.Now()}); !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("expiry now: err=%v, want ErrInvalid", err)
		}
		_, secret, err := db.CreateToken(ctx, store.TokenCreate{UserID: ana.ID, WorkspaceID: ws, Name: "day", Scope: store.ScopeWrite, ExpiresAt: clk.Now().Add(24 * time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		clk.Add(24 * time.Hour)
		if _, err := db.FindTokenBySecret(ctx, secret); !errors.Is(err, store.ErrUnauthorized) || !strings.Contains(err.Error(), "expired") {
			t.Fatalf("expired: err=%v, want ErrUnauthorized saying expired", err)
		}
	})
	t.Run("input", func(t *testing.T) {
		for _, in := range []store.TokenCreate{
			{UserID: ana.ID, WorkspaceID: ws, Name: "", Scope: store.ScopeRead},
			{UserID: ana.ID, WorkspaceID: ws, Name: "x", Scope: "admin"},
		} {
			if _, _, err := db.CreateToken(ctx, in); !errors.Is(err, store.ErrInvalid) {
				t.Fatalf("%+v: err=%v, want ErrInvalid", in, err)
			}
		}
		bo := mustUser(t, db, "bo@example.com")
		if _, _, err := db.CreateToken(ctx, store.TokenCreate{UserID: bo.ID, WorkspaceID: ws, Name: "x", Scope: store.ScopeRead}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("not a member: err=%v, want ErrNotFound", err)
		}
	})
	t.Run("removed member", func(t *testing.T) {
		bo, _ := db.FindUserByEmail(ctx, "bo@example.com")
		mustMember(t, db, ws, bo.ID, store.RoleEditor)
		_, secret, err := db.CreateToken(ctx, store.TokenCreate{UserID: bo.ID, WorkspaceID: ws, Name: "bo", Scope: store.ScopeWrite})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.RemoveMember(ctx, ws, bo.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.FindTokenBySecret(ctx, secret); !errors.Is(err, store.ErrUnauthorized) {
			t.Fatalf("removed member's token: err=%v, want ErrUnauthorized", err)
		}
	})
}

func TestSignInFailures(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	clk := newClock(db)
	for i := range store.SignInFailureLimit - 1 {
		if err := db.RecordSignInFailure(ctx, "Ana@example.com", "10.0.0."+string(rune('1'+i%3))); err != nil {
			t.Fatal(err)
		}
	}
	if limited, _ := db.SignInLimited(ctx, "ana@example.com", "10.0.0.9"); limited {
		t.Fatal("limited after 9 failures, want 10")
	}
	db.RecordSignInFailure(ctx, "ANA@example.com", "10.0.0.1")
	if limited, _ := db.SignInLimited(ctx, "ana@example.com", "10.0.0.9"); !limited {
		t.Fatal("not limited per account after 10 failures from several clients")
	}
	if limited, _ := db.SignInLimited(ctx, "bo@example.com", "10.0.0.9"); limited {
		t.Fatal("another account from another client is limited")
	}
	for range store.SignInFailureLimit {
		db.RecordSignInFailure(ctx, "guess"+clk.Now().Format("150405.000000000")+"@example.com", "10.0.0.9")
		clk.Add(time.Millisecond)
	}
	if limited, _ := db.SignInLimited(ctx, "bo@example.com", "10.0.0.9"); !limited {
		t.Fatal("not limited per client after 10 failures on several accounts")
	}
	clk.Add(store.SignInFailureWindow)
	if limited, _ := db.SignInLimited(ctx, "ana@example.com", "10.0.0.9"); limited {
		t.Fatal("still limited after the window")
	}
}

func TestSessionWorkspaceAndCleanup(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	clk := newClock(db)
	u := mustUser(t, db, "ana@example.com")
	side, err := db.CreateWorkspace(ctx, "  Side   project ")
	if err != nil || side.Name != "Side project" {
		t.Fatalf("CreateWorkspace=%v, %v", side, err)
	}
	foreign, _ := db.CreateWorkspace(ctx, "Foreign")
	mustMember(t, db, side.ID, u.ID, store.RoleViewer)
	if w, err := db.FindWorkspaceByName(ctx, "side PROJECT"); err != nil || w.ID != side.ID {
		t.Fatalf("FindWorkspaceByName=%v, %v", w, err)
	}

	s, secret, _ := db.CreateSession(ctx, store.SessionCreate{UserID: u.ID, Lifetime: 10 * time.Hour})
	if err := db.SetSessionWorkspace(ctx, s.ID, foreign.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("switch to a workspace of others: err=%v, want ErrNotFound", err)
	}
	if err := db.SetSessionWorkspace(ctx, s.ID, side.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.FindSessionBySecret(ctx, secret); got.WorkspaceID != side.ID || got.Role != store.RoleViewer || got.WorkspaceName != "Side project" {
		t.Fatalf("session=%+v, want the side project as viewer", got)
	}

	_, idleSecret, _ := db.CreateSession(ctx, store.SessionCreate{UserID: u.ID, Lifetime: 10 * time.Hour})
	clk.Add(2 * time.Hour)
	db.TouchSession(ctx, s.ID)
	n, err := db.DeleteExpiredSessions(ctx, time.Hour)
	if err != nil || n != 1 {
		t.Fatalf("DeleteExpiredSessions=%d, %v; want the idle one", n, err)
	}
	if _, err := db.FindSessionBySecret(ctx, idleSecret); !errors.Is(err, store.ErrUnauthorized) {
		t.Fatalf("idle session: err=%v", err)
	}
	if _, err := db.FindSessionBySecret(ctx, secret); err != nil {
		t.Fatalf("active session deleted: %v", err)
	}
}
