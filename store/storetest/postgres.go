package storetest

import (
	"testing"

	"github.com/baton-dev/baton/store/internal/pgtest"
)

// PostgresBin is where Debian's postgresql package puts the PostgreSQL 15
// server programs.
const PostgresBin = pgtest.Bin

// Postgres is a PostgreSQL server that a test started for itself in a
// temporary folder, listening on 127.0.0.1 at a free port with trust
// authentication. It is stopped and removed when the test ends.
type Postgres struct {
	// URL connects to it: postgres://baton@127.0.0.1:PORT/postgres.
	URL string

	tb  testing.TB
	srv *pgtest.Server
}

// StartPostgres starts a PostgreSQL server for a test and returns its URL.
// See NewPostgres.
func StartPostgres(tb testing.TB) (url string) {
	tb.Helper()
	return NewPostgres(tb).URL
}

// NewPostgres starts a PostgreSQL 15 server of the test's own, which the
// test may stop and start. When the server programs are missing (install
// Debian's postgresql package), the test is skipped, or fails under
// CI=true. initdb refuses to run as root, so as root the server runs as
// the postgres user. A test that only needs a database calls MustOpen
// with BATON_TEST_DB=postgres instead, which shares one server.
func NewPostgres(tb testing.TB) *Postgres {
	tb.Helper()
	pgtest.SkipIfMissing(tb)
	srv, err := pgtest.Start()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { srv.Close() })
	return &Postgres{URL: srv.URL, tb: tb, srv: srv}
}

// Stop stops the server (fast shutdown: connections are closed); Start
// starts it again on the same port, with its data.
func (p *Postgres) Stop() {
	p.tb.Helper()
	if err := p.srv.Stop(); err != nil {
		p.tb.Fatal(err)
	}
}

// Start starts the server and waits until it accepts connections.
func (p *Postgres) Start() {
	p.tb.Helper()
	if err := p.srv.Restart(); err != nil {
		p.tb.Fatal(err)
	}
}
