package main

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/baton-dev/baton/store"
)

// cli runs baton with args against one database, as a shell would.
type cli struct {
	t  *testing.T
	db string
}

func newCLI(t *testing.T) *cli {
	return &cli{t: t, db: filepath.Join(t.TempDir(), "data", "baton.db")}
}

// run runs args with stdin and BATON_DB set, and returns the exit code
// and both streams.
func (c *cli) run(stdin string, args ...string) (code int, stdout, stderr string) {
	c.t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, env("BATON_DB", c.db), strings.NewReader(stdin), &out, &errb)
	return exitCode(err), out.String(), errb.String()
}

func (c *cli) open() *store.DB {
	c.t.Helper()
	db, err := store.Open(context.Background(), c.db)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { db.Close() })
	return db
}

func TestUserAdd(t *testing.T) {
	c := newCLI(t)
	code, out, errs := c.run("a long enough password\n", "user", "add", "--email", "ana@example.com", "--name", "Ana")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if want := "created Ana <ana@example.com>, owner of Default"; !strings.Contains(out, want) {
		t.Fatalf("stdout=%q, want %q (the first user owns the workspace)", out, want)
	}

	tests := []struct {
		name       string
		stdin      string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"second user edits", "another good password\n", []string{"user", "add", "--email", "bo@example.com", "--name", "Bo"}, 0, "editor of Default", ""},
		{"duplicate email in other case", "another good password\n", []string{"user", "add", "--email", "ANA@example.com", "--name", "Ana 2"}, 1, "", "An account with the email ANA@example.com already exists"},
		{"weak password", "short\n", []string{"user", "add", "--email", "cy@example.com", "--name", "Cy"}, 1, "", "at least 12"},
		{"no password", "", []string{"user", "add", "--email", "cy@example.com", "--name", "Cy"}, 1, "", "no password on stdin"},
		{"bad role", "another good password\n", []string{"user", "add", "--email", "cy@example.com", "--name", "Cy", "--role", "boss"}, 1, "", `"boss" is not a role`},
		{"missing name", "another good password\n", []string{"user", "add", "--email", "cy@example.com"}, 2, "", "--email and --name are required"},
		{"new workspace", "another good password\r\n", []string{"user", "add", "--email", "dee@example.com", "--name", "Dee", "--workspace", "Acme", "--role", "viewer"}, 0, "viewer of Acme", ""},
		{"existing workspace by name", "another good password\n", []string{"user", "add", "--email", "eve@example.com", "--name", "Eve", "--workspace", "acme"}, 0, "owner of Acme", ""},
		{"no subcommand", "", []string{"user"}, 2, "", "usage: baton user"},
		{"unknown subcommand", "", []string{"user", "delete"}, 2, "", "unknown subcommand"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := c.run(tt.stdin, tt.args...)
			if code != tt.wantCode {
				t.Fatalf("exit %d (stderr %q), want %d", code, errs, tt.wantCode)
			}
			if !strings.Contains(out, tt.wantStdout) || !strings.Contains(errs, tt.wantStderr) {
				t.Fatalf("stdout=%q stderr=%q, want %q and %q", out, errs, tt.wantStdout, tt.wantStderr)
			}
		})
	}

	db := c.open()
	users, _ := db.ListUsers(context.Background())
	if len(users) != 4 {
		t.Fatalf("%d users, want 4: failed adds must change nothing", len(users))
	}
	// The password read from stdin is the account's, without its line ending.
	if _, err := db.AuthenticateUser(context.Background(), "dee@example.com", "another good password"); err != nil {
		t.Fatalf("sign in with the piped password: %v", err)
	}
	if _, err := db.FindWorkspaceByName(context.Background(), "Acme"); err != nil {
		t.Fatal(err)
	}
	db.Close()

	code, out, _ = c.run("", "user", "list")
	if code != 0 || !regexp.MustCompile(`dee@example.com\s+Dee\s+Acme \(viewer\)`).MatchString(out) || !strings.Contains(out, "Default (owner)") {
		t.Fatalf("user list: exit %d\n%s", code, out)
	}
}

func TestUserHonoursDBFlag(t *testing.T) {
	c := newCLI(t)
	other := filepath.Join(t.TempDir(), "other.db")
	if code, _, errs := c.run("a long enough password\n", "user", "add", "--db", other, "--email", "ana@example.com", "--name", "Ana"); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	_, out, _ := c.run("", "user", "list", "--db", other)
	if !strings.Contains(out, "ana@example.com") {
		t.Fatalf("user list --db: %q, want the user", out)
	}
	_, out, _ = c.run("", "user", "list")
	if strings.Contains(out, "ana@example.com") {
		t.Fatalf("BATON_DB's database lists a user added with --db elsewhere:\n%s", out)
	}
}

func TestTokenCommands(t *testing.T) {
	c := newCLI(t)
	if code, _, errs := c.run("a long enough password\n", "user", "add", "--email", "ana@example.com", "--name", "Ana"); code != 0 {
		t.Fatal(errs)
	}
	code, out, errs := c.run("", "token", "create", "--email", "ANA@example.com", "--scope", "write", "--name", "deploy", "--expires", "30d")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	secret := strings.TrimSuffix(out, "\n")
	if !regexp.MustCompile(`^baton_[A-Za-z0-9_-]{43}$`).MatchString(secret) {
		t.Fatalf("stdout=%q, want the token alone on one line", out)
	}

	db := c.open()
	tok, err := db.FindTokenBySecret(context.Background(), secret)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Name != "deploy" || tok.Scope != store.ScopeWrite || tok.ExpiresAt.IsZero() || tok.User.Email != "ana@example.com" {
		t.Fatalf("token=%+v", tok)
	}
	db.Close()

	for _, tt := range []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"unknown user", []string{"token", "create", "--email", "nobody@example.com"}, 1, "No account has the email nobody@example.com"},
		{"bad scope", []string{"token", "create", "--email", "ana@example.com", "--scope", "admin"}, 1, `"admin" is not a token scope`},
		{"bad expiry", []string{"token", "create", "--email", "ana@example.com", "--expires", "soon"}, 1, "use days (90d)"},
		{"unknown workspace", []string{"token", "create", "--email", "ana@example.com", "--workspace", "Nope"}, 1, `No workspace is named "Nope"`},
		{"missing email", []string{"token", "create"}, 2, "--email is required"},
		{"revoke unknown", []string{"token", "revoke", "nope"}, 1, "no token has the ID nope"},
		{"revoke without ID", []string{"token", "revoke"}, 2, "usage: baton token revoke"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := c.run("", tt.args...)
			if code != tt.wantCode || !strings.Contains(errs, tt.wantStderr) {
				t.Fatalf("exit %d stderr %q, want %d and %q", code, errs, tt.wantCode, tt.wantStderr)
			}
			if out != "" {
				t.Fatalf("stdout=%q on failure, want nothing", out)
			}
		})
	}

	code, out, _ = c.run("", "token", "list")
	if code != 0 || !strings.Contains(out, tok.ID) || !strings.Contains(out, "…"+secret[len(secret)-4:]) || strings.Contains(out, secret) {
		t.Fatalf("token list: exit %d\n%s\nwant the ID and last 4, never the token", code, out)
	}
	code, out, errs = c.run("", "token", "revoke", tok.ID)
	if code != 0 || !strings.Contains(out, "revoked token "+tok.ID+" (deploy)") {
		t.Fatalf("revoke: exit %d %q %q", code, out, errs)
	}
	_, out, _ = c.run("", "token", "list")
	if !strings.Contains(out, "revoked") {
		t.Fatalf("token list after revoke:\n%s", out)
	}
	db = c.open()
	if _, err := db.FindTokenBySecret(context.Background(), secret); err == nil {
		t.Fatal("a revoked token still authenticates")
	}
}

func TestParseLifetime(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want string
		ok   bool
	}{{"90d", "2160h0m0s", true}, {"12h", "12h0m0s", true}, {"never", "0s", true}, {"0d", "", false}, {"-1h", "", false}, {"x", "", false}} {
		got, err := parseLifetime(tt.in)
		if (err == nil) != tt.ok || (tt.ok && got.String() != tt.want) {
			t.Errorf("parseLifetime(%q)=%v, %v; want %s ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestSetupCode(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:8080", "localhost:8080", "[::1]:8080", "127.0.0.2:80"} {
		if got := setupCode(addr); got != "" {
			t.Errorf("setupCode(%q)=%q, want none on loopback", addr, got)
		}
	}
	for _, addr := range []string{":8080", "0.0.0.0:8080", "[::]:8080", "10.1.2.3:8080", "baton.example.com:443"} {
		got := setupCode(addr)
		if !regexp.MustCompile(`^[A-Z2-9]{10}$`).MatchString(got) {
			t.Errorf("setupCode(%q)=%q, want a 10-character code", addr, got)
		}
	}
	if a, b := setupCode(":8080"), setupCode(":8080"); a == b {
		t.Error("two setup codes are equal: not random")
	}
}
