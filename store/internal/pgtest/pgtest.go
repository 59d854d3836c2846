// Package pgtest starts PostgreSQL 15 servers for tests: a dedicated
// server that a test may stop and start, or one server shared by the whole
// test binary, with a fresh database per test made from a migrated
// template. It knows nothing of the store, so that the store's own tests
// can use it (storetest wraps it for everyone else).
//
// Set BATON_TEST_DB=postgres to run the store's tests on PostgreSQL; see
// Enabled and FreshDatabase.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Bin is where Debian's postgresql package puts the PostgreSQL 15 server
// programs.
const Bin = "/usr/lib/postgresql/15/bin"

// ErrNotInstalled means the PostgreSQL server programs are missing.
var ErrNotInstalled = errors.New("PostgreSQL 15 is not installed (" + Bin + "/initdb is missing); install Debian's postgresql package")

// EnvVar names the environment variable that picks the engine of the
// store's tests: "postgres", or "sqlite" (the default when unset).
const EnvVar = "BATON_TEST_DB"

// Enabled reports whether the tests run on PostgreSQL (BATON_TEST_DB=postgres).
// It panics on a value it does not know, so that a typo never silently
// tests SQLite instead.
func Enabled() bool {
	switch v := os.Getenv(EnvVar); v {
	case "", "sqlite":
		return false
	case "postgres":
		return true
	default:
		panic(fmt.Sprintf("%s=%q: want postgres or sqlite", EnvVar, v))
	}
}

// SkipIfMissing skips tb when the PostgreSQL server programs are missing,
// or fails it under CI=true, where they must be installed.
func SkipIfMissing(tb testing.TB) {
	tb.Helper()
	if _, err := os.Stat(filepath.Join(Bin, "initdb")); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatal(ErrNotInstalled)
		}
		tb.Skip(ErrNotInstalled)
	}
}

// Server is a PostgreSQL server running in a temporary folder, listening
// on 127.0.0.1 at a free port with trust authentication for the user
// baton. A watchdog process stops it and removes the folder when Close is
// called or when the process that started it exits, however it exits.
type Server struct {
	// URL connects to its postgres database as baton.
	URL string

	dir      string // the temporary folder: data, socket, log
	port     int
	asOwner  func(name string, args ...string) *exec.Cmd
	watchdog *exec.Cmd
	wake     io.WriteCloser // closing it tells the watchdog to clean up
	closed   bool
}

// Start runs initdb in a new temporary folder and starts a server there.
// As root, the server runs as the postgres user (initdb refuses root).
func Start() (_ *Server, err error) {
	if _, err := os.Stat(filepath.Join(Bin, "initdb")); err != nil {
		return nil, ErrNotInstalled
	}
	dir, err := os.MkdirTemp("", "baton-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir,
		asOwner: func(name string, args ...string) *exec.Cmd { return exec.Command(name, args...) }}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root, PostgreSQL needs the postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chmod(dir, 0o755); err != nil {
			return nil, err
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
		s.asOwner = func(name string, args ...string) *exec.Cmd {
			return exec.Command("runuser", append([]string{"-u", "postgres", "--", name}, args...)...)
		}
	}
	if err := s.startWatchdog(); err != nil {
		return nil, err
	}
	if s.port, err = freePort(); err != nil {
		return nil, err
	}
	// The databases' own collation is a linguistic one (ICU's en-US), as
	// on many servers: the schema must not depend on byte order by default.
	if err := s.run("initdb", "-D", s.data(), "-U", "baton", "--auth=trust", "-E", "UTF8", "--locale=C",
		"--locale-provider=icu", "--icu-locale=en-US", "--no-sync"); err != nil {
		return nil, err
	}
	s.URL = s.DatabaseURL("postgres")
	if err := s.Restart(); err != nil {
		return nil, err
	}
	return s, nil
}

// startWatchdog starts the process that stops the server and removes its
// folder once its standard input closes: when Close closes it, or when
// this process ends and the system closes it. It runs in its own process
// group, so that a Ctrl-C meant for the tests does not stop it first.
func (s *Server) startWatchdog() error {
	script := fmt.Sprintf(`cat >/dev/null; %s -D %s stop -m immediate >/dev/null 2>&1; rm -rf %s`,
		filepath.Join(Bin, "pg_ctl"), shellQuote(s.data()), shellQuote(s.dir))
	cmd := s.asOwner("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	w, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the PostgreSQL watchdog: %w", err)
	}
	s.watchdog, s.wake = cmd, w
	return nil
}

func shellQuote(s string) string { return `'` + strings.ReplaceAll(s, `'`, `'\''`) + `'` }

// DatabaseURL is the URL of the database name on the server.
func (s *Server) DatabaseURL(name string) string {
	return fmt.Sprintf("postgres://baton@127.0.0.1:%d/%s?sslmode=disable", s.port, name)
}

func (s *Server) data() string { return filepath.Join(s.dir, "data") }

// Stop stops the server (fast shutdown: connections are closed), keeping
// its data; Restart starts it again on the same port.
func (s *Server) Stop() error {
	return s.run("pg_ctl", "-D", s.data(), "stop", "-m", "fast")
}

// Restart starts the server and waits until it accepts connections.
func (s *Server) Restart() error {
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"+
		" -c synchronous_commit=off -c max_connections=300", s.port, s.dir)
	return s.run("pg_ctl", "-D", s.data(), "start", "-w", "-t", "60", "-l", filepath.Join(s.dir, "log"), "-o", opts)
}

// Close stops the server at once and removes its folder.
func (s *Server) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if s.watchdog == nil {
		return os.RemoveAll(s.dir)
	}
	s.wake.Close()
	return s.watchdog.Wait()
}

// run runs one of the server programs as the data folder's owner.
func (s *Server) run(prog string, args ...string) error {
	cmd := s.asOwner(filepath.Join(Bin, prog), args...)
	cmd.Dir = s.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "log"))
		return fmt.Errorf("%s %s: %v\n%s\n%s", prog, strings.Join(args, " "), err, out, log)
	}
	return nil
}

// freePort returns a TCP port of 127.0.0.1 that nothing listens on now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// TemplateName is the database that FreshDatabase migrates once and
// copies for each test.
const TemplateName = "baton_template"

// shared is the test binary's one server.
var shared struct {
	mu     sync.Mutex
	srv    *Server
	err    error // why the server or the template could not be made
	tmpl   bool  // the template is migrated
	n      atomic.Int64
	closed bool
}

// exec runs statements on the postgres database of s, on a connection of
// its own that it closes: nothing stays open between tests (goleak finds
// no pool's goroutine).
func (s *Server) exec(stmts ...string) error {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.URL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for _, q := range stmts {
		if _, err := conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// FreshDatabase returns the URL of a new, empty-but-migrated database on
// the test binary's shared server, dropped when tb ends. The first call
// starts the server and makes the template database, running migrate on
// its URL (migrate must close its connections before returning); each
// call copies the template, which costs a few milliseconds. It skips tb
// when PostgreSQL is not installed (fails it under CI=true). Call Main
// from TestMain to stop the server when the tests end.
func FreshDatabase(tb testing.TB, migrate func(url string) error) string {
	tb.Helper()
	SkipIfMissing(tb)
	srv, err := sharedTemplate(migrate)
	if err != nil {
		tb.Fatal(err)
	}
	name := fmt.Sprintf("t%d", shared.n.Add(1))
	// FILE_COPY copies the template's files as they are, which for a small
	// database costs less than WAL_LOG's writing them all to the WAL.
	if err := srv.exec(`CREATE DATABASE ` + name + ` TEMPLATE ` + TemplateName + ` STRATEGY FILE_COPY`); err != nil {
		tb.Fatalf("create a test database: %v", err)
	}
	tb.Cleanup(func() {
		if err := srv.exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`); err != nil {
			tb.Errorf("drop the test database: %v", err)
		}
	})
	return srv.DatabaseURL(name)
}

// sharedTemplate starts the shared server and migrates its template the
// first time, and returns the server.
func sharedTemplate(migrate func(url string) error) (*Server, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.err != nil || shared.tmpl {
		return shared.srv, shared.err
	}
	if shared.closed {
		return nil, errors.New("the shared PostgreSQL server was stopped: tests ran after Main returned")
	}
	fail := func(err error) (*Server, error) {
		shared.err = fmt.Errorf("shared PostgreSQL server: %w", err)
		return nil, shared.err
	}
	if shared.srv == nil {
		srv, err := Start()
		if err != nil {
			return fail(err)
		}
		shared.srv = srv
	}
	if err := shared.srv.exec(`CREATE DATABASE ` + TemplateName); err != nil {
		return fail(err)
	}
	if err := migrate(shared.srv.DatabaseURL(TemplateName)); err != nil {
		return fail(fmt.Errorf("migrate the template database: %w", err))
	}
	shared.tmpl = true
	return shared.srv, nil
}

// StopShared stops the shared server, if one was started, and removes its
// folder.
func StopShared() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	shared.closed = true
	if shared.srv != nil {
		shared.srv.Close()
	}
}

// Main runs the tests and then stops the shared server; it returns the
// exit code. Call it from the TestMain of a package whose tests open
// databases: func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }.
func Main(m *testing.M) int {
	code := m.Run()
	StopShared()
	return code
}
