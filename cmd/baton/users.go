package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/baton-dev/baton/store"
)

const userUsage = `usage: baton user <add|list> [flags]

  baton user add --email E --name N [--role owner|editor|viewer] [--workspace NAME] < password
      creates an account; the password is the first line of stdin. The workspace
      is created when no workspace has that name (default: the first workspace).
      Without --role the user owns a workspace that has no owner, else edits it.
  baton user list
      lists accounts with their workspaces and roles.

Every subcommand takes --db PATH or a postgres:// URL (BATON_DB).`

const tokenUsage = `usage: baton token <create|list|revoke> [flags]

  baton token create --email E [--workspace NAME] [--scope read|write] [--name N] [--expires 90d]
      makes an API token for the user in the workspace and prints it, once, alone on stdout.
      --expires takes days (90d), a Go duration (12h) or "never".
  baton token list
      lists tokens: ID, name, user, workspace, scope, last 4 characters, last use, state.
  baton token revoke ID
      revokes a token for good.

Every subcommand takes --db PATH or a postgres:// URL (BATON_DB).`

// cliFail reports a failure of command cmd on stderr and returns it with
// exit code 1.
func cliFail(stderr io.Writer, cmd string, err error) error {
	msg := err.Error()
	if code := store.ErrorCode(err); code != store.EINTERNAL {
		msg = store.ErrorMessage(err)
	}
	fmt.Fprintf(stderr, "baton %s: %s\n", cmd, msg)
	return &exitCodeError{code: 1, err: err, reported: true}
}

// subcommand splits "add --email …" into the subcommand and its flags.
func subcommand(args []string, usage string, stdout, stderr io.Writer) (string, []string, error) {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			fmt.Fprintln(stdout, usage)
			return "", nil, &exitCodeError{code: 0, err: flag.ErrHelp, reported: true}
		}
		fmt.Fprintln(stderr, usage)
		return "", nil, &exitCodeError{code: 2, err: errors.New("a subcommand is required"), reported: true}
	}
	return args[0], args[1:], nil
}

// runUser implements `baton user add|list`.
func runUser(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	sub, args, err := subcommand(args, userUsage, stdout, stderr)
	if err != nil {
		return err
	}
	var cfg config
	cfg.fromEnv(getenv)
	fs := flag.NewFlagSet("user "+sub, flag.ContinueOnError)
	fs.StringVar(&cfg.DB, "db", cfg.DB, dbUsage)
	switch sub {
	case "add":
		email := fs.String("email", "", "the account's email address (required)")
		name := fs.String("name", "", "the person's name (required)")
		role := fs.String("role", "", "owner, editor or viewer (default: owner of a workspace without one, else editor)")
		workspace := fs.String("workspace", "", "the workspace to join, created if missing (default: the first workspace)")
		if err := parseFlags(fs, args, stderr); err != nil {
			return err
		}
		if *email == "" || *name == "" {
			fmt.Fprintln(stderr, "baton user add: --email and --name are required; the password is read from stdin")
			return &exitCodeError{code: 2, err: errors.New("missing --email or --name"), reported: true}
		}
		password, err := readPassword(stdin)
		if err != nil {
			return cliFail(stderr, "user add", err)
		}
		db, err := cfg.openDB(ctx)
		if err != nil {
			return err
		}
		defer db.Close()
		u, m, err := db.AddUser(ctx, store.UserAdd{
			User:      store.UserCreate{Email: *email, Name: *name, Password: password},
			Workspace: *workspace,
			Role:      store.MemberRole(*role),
		})
		if err != nil {
			return cliFail(stderr, "user add", err)
		}
		fmt.Fprintf(stdout, "created %s <%s>, %s of %s\n", u.Name, u.Email, m.Role, m.WorkspaceName)
		return nil
	case "list":
		if err := parseFlags(fs, args, stderr); err != nil {
			return err
		}
		db, err := cfg.openDB(ctx)
		if err != nil {
			return err
		}
		defer db.Close()
		users, err := db.ListUsers(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "EMAIL\tNAME\tWORKSPACES\tCREATED")
		for _, u := range users {
			ms, err := db.FindMemberships(ctx, store.MembershipFilter{UserID: u.ID})
			if err != nil {
				return err
			}
			var ws []string
			for _, m := range ms {
				ws = append(ws, fmt.Sprintf("%s (%s)", m.WorkspaceName, m.Role))
			}
			if len(ws) == 0 {
				ws = []string{"-"}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", u.Email, u.Name, strings.Join(ws, ", "), u.CreatedAt.Format("2006-01-02"))
		}
		return tw.Flush()
	}
	fmt.Fprintf(stderr, "baton user: unknown subcommand %q\n\n%s\n", sub, userUsage)
	return &exitCodeError{code: 2, err: fmt.Errorf("unknown subcommand %q", sub), reported: true}
}

// readPassword reads the first line of r, without its line ending.
func readPassword(r io.Reader) (string, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read the password from stdin: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("no password on stdin: pipe one line, e.g. printf '%s\\n' \"$PASSWORD\" | baton user add …")
	}
	return line, nil
}

// runToken implements `baton token create|list|revoke`.
func runToken(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	sub, args, err := subcommand(args, tokenUsage, stdout, stderr)
	if err != nil {
		return err
	}
	var cfg config
	cfg.fromEnv(getenv)
	fs := flag.NewFlagSet("token "+sub, flag.ContinueOnError)
	fs.StringVar(&cfg.DB, "db", cfg.DB, dbUsage)
	switch sub {
	case "create":
		email := fs.String("email", "", "the user the token acts for (required)")
		workspace := fs.String("workspace", "", "the workspace it acts in (default: the user's only workspace, or the first one)")
		scope := fs.String("scope", "read", "read (GET only) or write")
		name := fs.String("name", "cli", "a name to recognise the token by")
		expires := fs.String("expires", "90d", `lifetime: days (90d), a duration (12h) or "never"`)
		if err := parseFlags(fs, args, stderr); err != nil {
			return err
		}
		if *email == "" {
			fmt.Fprintln(stderr, "baton token create: --email is required")
			return &exitCodeError{code: 2, err: errors.New("missing --email"), reported: true}
		}
		lifetime, err := parseLifetime(*expires)
		if err != nil {
			return cliFail(stderr, "token create", err)
		}
		db, err := cfg.openDB(ctx)
		if err != nil {
			return err
		}
		defer db.Close()
		u, err := db.FindUserByEmail(ctx, *email)
		if err != nil {
			return cliFail(stderr, "token create", err)
		}
		wsID, err := tokenWorkspace(ctx, db, u, *workspace)
		if err != nil {
			return cliFail(stderr, "token create", err)
		}
		in := store.TokenCreate{UserID: u.ID, WorkspaceID: wsID, Name: *name, Scope: store.TokenScope(*scope)}
		if lifetime > 0 {
			in.ExpiresAt = time.Now().UTC().Add(lifetime)
		}
		_, secret, err := db.CreateToken(ctx, in)
		if err != nil {
			return cliFail(stderr, "token create", err)
		}
		fmt.Fprintln(stdout, secret)
		return nil
	case "list":
		if err := parseFlags(fs, args, stderr); err != nil {
			return err
		}
		db, err := cfg.openDB(ctx)
		if err != nil {
			return err
		}
		defer db.Close()
		tokens, err := db.FindTokens(ctx, store.TokenFilter{})
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tUSER\tWORKSPACE\tSCOPE\tTOKEN\tLAST USED\tSTATE")
		now := time.Now()
		for _, t := range tokens {
			user := t.UserID
			if u, err := db.FindUserByID(ctx, t.UserID); err == nil {
				user = u.Email
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t…%s\t%s\t%s\n", t.ID, t.Name, user, t.WorkspaceName, t.Scope, t.Last4,
				dateOrDash(t.LastUsedAt), tokenState(t, now))
		}
		return tw.Flush()
	case "revoke":
		fs.Usage = func() { fmt.Fprintln(stderr, "usage: baton token revoke [--db PATH] ID") }
		// The ID may come before or after the flags.
		var id string
		if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
			id, args = args[0], args[1:]
		}
		fs.SetOutput(stderr)
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return &exitCodeError{code: 0, err: err, reported: true}
			}
			return &exitCodeError{code: 2, err: err, reported: true}
		}
		if id == "" && fs.NArg() > 0 {
			id = fs.Arg(0)
		}
		if id == "" || fs.NArg() > 1 || (fs.NArg() == 1 && fs.Arg(0) != id) {
			fs.Usage()
			return &exitCodeError{code: 2, err: errors.New("want exactly one token ID"), reported: true}
		}
		db, err := cfg.openDB(ctx)
		if err != nil {
			return err
		}
		defer db.Close()
		t, err := db.RevokeToken(ctx, id, "")
		if errors.Is(err, store.ErrNotFound) {
			return cliFail(stderr, "token revoke", fmt.Errorf("no token has the ID %s; see baton token list", id))
		} else if err != nil {
			return cliFail(stderr, "token revoke", err)
		}
		fmt.Fprintf(stdout, "revoked token %s (%s)\n", t.ID, t.Name)
		return nil
	}
	fmt.Fprintf(stderr, "baton token: unknown subcommand %q\n\n%s\n", sub, tokenUsage)
	return &exitCodeError{code: 2, err: fmt.Errorf("unknown subcommand %q", sub), reported: true}
}

// tokenWorkspace picks the workspace of a new token: the one named, else
// the user's only one, else the default workspace if the user is in it.
func tokenWorkspace(ctx context.Context, db *store.DB, u *store.User, name string) (string, error) {
	if name != "" {
		w, err := db.FindWorkspaceByName(ctx, name)
		if err != nil {
			return "", err
		}
		return w.ID, nil
	}
	ms, err := db.FindMemberships(ctx, store.MembershipFilter{UserID: u.ID})
	if err != nil {
		return "", err
	}
	switch {
	case len(ms) == 0:
		return "", fmt.Errorf("%s is not a member of any workspace; add them with baton user add or an invite", u.Email)
	case len(ms) == 1:
		return ms[0].WorkspaceID, nil
	}
	for _, m := range ms {
		if m.WorkspaceID == db.DefaultWorkspaceID() {
			return m.WorkspaceID, nil
		}
	}
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = strconv.Quote(m.WorkspaceName)
	}
	return "", fmt.Errorf("%s is in several workspaces (%s): choose one with --workspace", u.Email, strings.Join(names, ", "))
}

// parseLifetime reads --expires: "90d", a Go duration, or "never" (zero).
func parseLifetime(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "never" || s == "0" || s == "" {
		return 0, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err == nil && n > 0 && n <= 3650 {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	} else if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return d, nil
	}
	return 0, fmt.Errorf("--expires %q: use days (90d), a duration (12h) or never", s)
}

func dateOrDash(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Format("2006-01-02 15:04")
}

func tokenState(t *store.Token, now time.Time) string {
	switch {
	case !t.RevokedAt.IsZero():
		return "revoked " + t.RevokedAt.Format("2006-01-02")
	case !t.ExpiresAt.IsZero() && !now.Before(t.ExpiresAt):
		return "expired " + t.ExpiresAt.Format("2006-01-02")
	case !t.ExpiresAt.IsZero():
		return "expires " + t.ExpiresAt.Format("2006-01-02")
	}
	return "no expiry"
}

// setupCode returns the one-time code /setup asks for when Baton listens
// on addr: a random code when addr is reachable from other machines (any
// host but loopback), "" on loopback, where only this machine can reach
// the page. The server prints it in its log at start-up.
func setupCode(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return ""
	}
	if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil && ip.IsLoopback() {
		return ""
	}
	// 10 characters of a 32-letter alphabet without look-alikes: 50 bits.
	const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	b := make([]byte, 10)
	rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}
