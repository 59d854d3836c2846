// Command baton serves Baton: brainstorm with an AI, hand the decisions to
// a plan agent, and keep them as workspace memory.
//
//	baton [serve] [--addr A] [--db PATH|URL] [--provider P] [--model M]
//	baton extract [--provider P] FILE
//	baton migrate [--db PATH|URL]
//	baton migrate-data --from PATH --to URL
//	baton envelope validate|export|import …
//	baton version
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/web"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		var ec *exitCodeError
		if errors.As(err, &ec) {
			if !ec.reported {
				fmt.Fprintln(os.Stderr, "baton:", ec.err)
			}
			os.Exit(ec.code)
		}
		fmt.Fprintln(os.Stderr, "baton:", err)
		os.Exit(1)
	}
}

const usage = `usage: baton <command> [flags]

Commands:
  serve     serve the web app (the default)
  extract   extract decisions, files and risks from a transcript (JSON) and print them
  migrate   create or upgrade the database, then exit
  migrate-data  copy a SQLite installation into an empty PostgreSQL database
  user      add or list accounts (baton user add|list)
  token     create, list or revoke API tokens (baton token create|list|revoke)
  envelope  validate, export or import handoff envelopes (baton envelope help)
  version   print the version

Run "baton <command> -h" for a command's flags.`

// run is main, testable: arguments, environment and streams come in, an
// error goes out (an *exitCodeError carries the exit code).
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return runServe(ctx, args, getenv, stdout, stderr)
	case "migrate":
		return runMigrate(ctx, args, getenv, stdout, stderr)
	case "migrate-data":
		return runMigrateData(ctx, args, getenv, stdout, stderr)
	case "envelope":
		return runEnvelope(ctx, args, getenv, stdout, stderr)
	case "extract":
		cfg := config{}
		cfg.fromEnv(getenv)
		return runExtract(ctx, args, stdin, stdout, stderr, func(name string) (agent.Extractor, error) {
			if name != "" {
				cfg.Provider = name
			}
			p, err := cfg.newProvider(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
			if err != nil {
				return nil, err
			}
			if x, _ := extractorAndJudge(p); x != nil {
				return x, nil
			}
			return agent.ModelExtractor(p), nil
		})
	case "user":
		return runUser(ctx, args, getenv, stdin, stdout, stderr)
	case "token":
		return runToken(ctx, args, getenv, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "baton", version)
		return nil
	case "help":
		fmt.Fprintln(stdout, usage)
		return nil
	}
	fmt.Fprintf(stderr, "baton: unknown command %q\n\n%s\n", cmd, usage)
	return &exitCodeError{code: 2, err: fmt.Errorf("unknown command %q", cmd), reported: true}
}

// parseFlags parses a command's flags; bad flags print usage and exit 2.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return &exitCodeError{code: 0, err: err, reported: true}
		}
		return &exitCodeError{code: 2, err: err, reported: true}
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "baton %s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		fs.Usage()
		return &exitCodeError{code: 2, err: fmt.Errorf("unexpected argument %q", fs.Arg(0)), reported: true}
	}
	return nil
}

func runServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var cfg config
	cfg.fromEnv(getenv)
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	cfg.flags(fs, true)
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.logLevel()}))
	hosts, err := cfg.allowedHosts()
	if err != nil {
		return err
	}
	auth, err := cfg.authConfig()
	if err != nil {
		return err
	}

	provider, err := cfg.newProvider(log)
	if err != nil {
		return err
	}
	db, err := cfg.openDB(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	// One instance on SQLite: what a previous process left running was
	// interrupted. Instances sharing PostgreSQL must not end each other's
	// live runs: each sweeps for jobs whose lease expired instead (web).
	if !db.Shared() {
		if err := db.RecoverInterrupted(ctx); err != nil {
			return err
		}
	}
	// Handoff summaries whose first reply was saved just before a stop.
	if _, err := db.CleanupThreadHandoffs(ctx); err != nil {
		return err
	}
	if provider, err = cfg.withBudget(provider, db); err != nil {
		return err
	}

	key, err := sessionKey(ctx, db, cfg.SessionKey)
	if err != nil {
		return err
	}
	extractor, judge := extractorAndJudge(provider)
	if auth.SetupCode != "" {
		if setUp, err := db.HasUsers(ctx); err != nil {
			return err
		} else if !setUp {
			log.Warn("Baton is not set up yet: open /setup and type this one-time setup code", "setup_code", auth.SetupCode)
		}
	}
	wcfg := web.Config{DB: db, Provider: provider, Extractor: extractor, Judge: judge, Summariser: summariser(provider),
		Logger: log, SessionKey: key, Version: version, MemoryBudget: cfg.MemoryTokens, Hosts: hosts, Auth: auth,
		PublicURL: strings.TrimRight(cfg.PublicURL, "/")}
	mir, err := cfg.newMirror(db, log)
	if err != nil {
		return err
	}
	if mir != nil {
		mirCtx, stopMirror := context.WithCancel(context.WithoutCancel(ctx))
		mirDone := make(chan struct{})
		go func() { mir.Run(mirCtx); close(mirDone) }()
		defer func() { stopMirror(); <-mirDone; mir.Close() }()
		wcfg.Mirror = mir
		log.Info("mirroring thread handoffs to PostgreSQL", "url", agent.RedactURL(cfg.MirrorURL))
	}
	srv := web.New(wcfg)
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (is another Baton running? set --addr or BATON_ADDR)", cfg.Addr, err)
	}
	srv.RecoverMemory(ctx)
	httpSrv := srv.HTTPServer(cfg.Addr)
	errc := make(chan error, 1)
	go func() { errc <- httpSrv.Serve(ln) }()
	log.Info("baton ready", "url", "http://"+ln.Addr().String(), "provider", provider.Name(),
		"model", provider.Model(), "db", db.Path(), "version", version)

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The HTTP server closes its listener first, then runs this hook:
	// running replies, extractions and plans are stopped (and saved as
	// such), which ends their streams, so that the connections drain.
	stopc := make(chan error, 1)
	httpSrv.RegisterOnShutdown(func() { stopc <- srv.Shutdown(shutdownCtx) })
	if err := httpSrv.Shutdown(shutdownCtx); err != nil {
		httpSrv.Close()
		return errors.Join(<-stopc, fmt.Errorf("shutdown: %w", err))
	}
	stopErr := <-stopc
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return stopErr
}

func runMigrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var cfg config
	cfg.fromEnv(getenv)
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.StringVar(&cfg.DB, "db", cfg.DB, dbUsage)
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	db, err := cfg.openDB(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "database ready:", db.Path())
	return db.Close()
}

// sessionKey returns the key that signs session cookies: BATON_SESSION_KEY
// when set (instances behind one load balancer must share it), else a key
// made on first use and kept in the database, so that sessions survive
// restarts and every instance on one database reads the same key.
func sessionKey(ctx context.Context, db *store.DB, configured string) ([]byte, error) {
	if configured != "" {
		if b, err := hex.DecodeString(configured); err == nil && len(b) >= 32 {
			return b, nil
		}
		if len(configured) < 32 {
			return nil, &exitCodeError{code: 2, err: errors.New("BATON_SESSION_KEY is too short: set at least 32 random characters, e.g. the output of `openssl rand -hex 32`")}
		}
		return []byte(configured), nil
	}
	b := make([]byte, 32)
	rand.Read(b)
	v, err := db.EnsureSetting(ctx, "session_key", hex.EncodeToString(b))
	if err != nil {
		return nil, fmt.Errorf("session key: %w", err)
	}
	return hex.DecodeString(v)
}
