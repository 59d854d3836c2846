package storetest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// PostgresBin is where Debian's postgresql package puts the PostgreSQL 15
// server programs.
const PostgresBin = "/usr/lib/postgresql/15/bin"

// Postgres is a PostgreSQL server that a test started in a temporary
// folder, listening on 127.0.0.1 at a free port with trust authentication.
// It is stopped and removed when the test ends.
type Postgres struct {
	// URL connects to it: postgres://baton@127.0.0.1:PORT/postgres.
	URL string

	tb      testing.TB
	dir     string // the temporary folder: data, socket, log
	port    int
	asOwner func(name string, args ...string) *exec.Cmd
	running bool
}

// StartPostgres starts a PostgreSQL server for a test and returns its URL.
// See NewPostgres.
func StartPostgres(tb testing.TB) (url string) {
	tb.Helper()
	return NewPostgres(tb).URL
}

// NewPostgres starts a PostgreSQL 15 server in a temporary folder. When
// the server programs are missing (install Debian's postgresql package),
// the test is skipped, or fails under CI=true. initdb refuses to run as
// root, so as root the server runs as the postgres user.
func NewPostgres(tb testing.TB) *Postgres {
	tb.Helper()
	if _, err := os.Stat(filepath.Join(PostgresBin, "initdb")); err != nil {
		msg := fmt.Sprintf("PostgreSQL 15 is not installed (%s/initdb: %v); install Debian's postgresql package", PostgresBin, err)
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	dir, err := os.MkdirTemp("", "baton-pg-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	p := &Postgres{tb: tb, dir: dir, port: freePort(tb),
		asOwner: func(name string, args ...string) *exec.Cmd { return exec.Command(name, args...) }}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			tb.Fatalf("running as root, PostgreSQL needs the postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chmod(dir, 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			tb.Fatal(err)
		}
		p.asOwner = func(name string, args ...string) *exec.Cmd {
			return exec.Command("runuser", append([]string{"-u", "postgres", "--", name}, args...)...)
		}
	}
	p.run("initdb", "-D", p.data(), "-U", "baton", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync")
	p.URL = fmt.Sprintf("postgres://baton@127.0.0.1:%d/postgres?sslmode=disable", p.port)
	p.Start()
	tb.Cleanup(func() {
		if p.running {
			p.ctl("stop", "-m", "immediate")
		}
	})
	return p
}

func (p *Postgres) data() string { return filepath.Join(p.dir, "data") }

// Stop stops the server (fast shutdown: connections are closed); Start
// starts it again on the same port, with its data.
func (p *Postgres) Stop() {
	p.tb.Helper()
	p.ctl("stop", "-m", "fast")
	p.running = false
}

// Start starts the server and waits until it accepts connections.
func (p *Postgres) Start() {
	p.tb.Helper()
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off", p.port, p.dir)
	p.ctl("start", "-w", "-t", "60", "-l", filepath.Join(p.dir, "log"), "-o", opts)
	p.running = true
}

// ctl runs pg_ctl on the data folder.
func (p *Postgres) ctl(args ...string) {
	p.tb.Helper()
	p.run("pg_ctl", append([]string{"-D", p.data()}, args...)...)
}

// run runs one of the server programs as the data folder's owner.
func (p *Postgres) run(prog string, args ...string) {
	p.tb.Helper()
	cmd := p.asOwner(filepath.Join(PostgresBin, prog), args...)
	cmd.Dir = p.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(p.dir, "log"))
		p.tb.Fatalf("%s %s: %v\n%s\n%s", prog, strings.Join(args, " "), err, out, log)
	}
}

// freePort returns a TCP port of 127.0.0.1 that nothing listens on now.
func freePort(tb testing.TB) int {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
