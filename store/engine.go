package store

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// The store runs on two engines: SQLite (the embedded default, a file) and
// PostgreSQL (a postgres:// URL, for several instances on one database).
// Queries are written once, in the SQL both understand, with ? for
// parameters; a pool or transaction of the PostgreSQL engine rewrites ?
// to $1, $2… and passes booleans as the integers the schema stores. What
// the engines do differently (full-text search, aggregating strings, JSON
// arrays, errors) lives in sqlite.go and postgres.go behind the engine's
// methods.

// engine names a database engine.
type engine int

const (
	engineSQLite engine = iota
	enginePostgres
)

func (e engine) String() string {
	if e == enginePostgres {
		return "postgres"
	}
	return "sqlite"
}

// pool is a connection pool that speaks the store's SQL to its engine.
type pool struct {
	db  *sql.DB
	eng engine
}

// txn is a transaction of a pool.
type txn struct {
	tx  *sql.Tx
	eng engine
}

func (p *pool) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return p.db.QueryContext(ctx, p.eng.sql(q), p.eng.args(args)...)
}

func (p *pool) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return p.db.QueryRowContext(ctx, p.eng.sql(q), p.eng.args(args)...)
}

func (p *pool) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return p.db.ExecContext(ctx, p.eng.sql(q), p.eng.args(args)...)
}

// PrepareContext prepares q. Arguments to the statement are passed as
// they are: pass them through eng.args, or prepare only queries whose
// arguments are not booleans (DB.readRows does the former).
func (p *pool) PrepareContext(ctx context.Context, q string) (*sql.Stmt, error) {
	return p.db.PrepareContext(ctx, p.eng.sql(q))
}

func (p *pool) BeginTx(ctx context.Context, opts *sql.TxOptions) (*txn, error) {
	tx, err := p.db.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &txn{tx: tx, eng: p.eng}, nil
}

func (p *pool) Close() error { return p.db.Close() }

func (t *txn) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return t.tx.QueryContext(ctx, t.eng.sql(q), t.eng.args(args)...)
}

func (t *txn) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return t.tx.QueryRowContext(ctx, t.eng.sql(q), t.eng.args(args)...)
}

func (t *txn) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return t.tx.ExecContext(ctx, t.eng.sql(q), t.eng.args(args)...)
}

// PrepareContext prepares q in the transaction; see pool.PrepareContext.
func (t *txn) PrepareContext(ctx context.Context, q string) (*sql.Stmt, error) {
	return t.tx.PrepareContext(ctx, t.eng.sql(q))
}

// StmtContext is a pool's prepared statement run in the transaction.
func (t *txn) StmtContext(ctx context.Context, st *sql.Stmt) *sql.Stmt {
	return t.tx.StmtContext(ctx, st)
}

func (t *txn) Commit() error   { return t.tx.Commit() }
func (t *txn) Rollback() error { return t.tx.Rollback() }

// stringAgg is the SQL of an aggregate that joins expr over the rows of a
// group with sep between them (NULL for no row), in the order of the SQL
// order when it is not "". SQLite's group_concat keeps the order of the
// subquery it reads, which must then be sorted by order already; the
// order is a hint that lets PostgreSQL sort by itself. sep is a constant
// of the program: it is written into the SQL.
func (e engine) stringAgg(expr, sep, order string) string {
	if e == enginePostgres {
		if order != "" {
			return `string_agg(` + expr + `, '` + sep + `' ORDER BY ` + order + `)`
		}
		return `string_agg(` + expr + `, '` + sep + `')`
	}
	return `group_concat(` + expr + `, '` + sep + `')`
}

// jsonArrayHas is the SQL of a condition that holds when the JSON array
// of strings in column col holds the string of one parameter (?).
func (e engine) jsonArrayHas(col string) string {
	if e == enginePostgres {
		return `EXISTS (SELECT 1 FROM jsonb_array_elements_text(` + col + `::jsonb) AS t(value) WHERE t.value = ?)`
	}
	return `EXISTS (SELECT 1 FROM json_each(` + col + `) WHERE json_each.value = ?)`
}

// forUpdate is the clause that locks the rows a SELECT reads until the
// transaction ends; SQLite's single writer needs none.
func (e engine) forUpdate() string {
	if e == enginePostgres {
		return ` FOR UPDATE`
	}
	return ``
}

// sql returns q as the engine reads it.
func (e engine) sql(q string) string {
	if e != enginePostgres || !strings.Contains(q, "?") {
		return q
	}
	return rebind(q)
}

// args returns the arguments as the engine takes them: PostgreSQL does
// not turn a bool into the 0 or 1 of an integer column.
func (e engine) args(args []any) []any {
	if e != enginePostgres {
		return args
	}
	copied := false
	for i, a := range args {
		b, ok := a.(bool)
		if !ok {
			continue
		}
		if !copied { // never change the caller's slice
			args, copied = append([]any(nil), args...), true
		}
		args[i] = int64(0)
		if b {
			args[i] = int64(1)
		}
	}
	return args
}

// rebound caches rewritten queries; most are constants. Past maxRebound
// entries, queries are rewritten every time instead of remembered.
var (
	rebound      sync.Map // string -> string
	reboundCount atomic.Int64
)

const maxRebound = 4096

// rebind rewrites the ? parameters of q to PostgreSQL's $1, $2… (and a
// numbered ?NNN to $NNN), leaving string literals, quoted identifiers and
// comments alone.
func rebind(q string) string {
	if v, ok := rebound.Load(q); ok {
		return v.(string)
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(q[i+1:], c)
			if j < 0 {
				b.WriteString(q[i:])
				i = len(q)
				continue
			}
			b.WriteString(q[i : i+j+2])
			i += j + 1
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				j = len(q) - i
			}
			b.WriteString(q[i : i+j])
			i += j - 1
		case c == '?' && i+1 < len(q) && q[i+1] >= '0' && q[i+1] <= '9':
			// ?NNN names a parameter by number, as $NNN does.
			b.WriteByte('$')
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
		default:
			b.WriteByte(c)
		}
	}
	out := b.String()
	if reboundCount.Load() < maxRebound {
		if _, loaded := rebound.LoadOrStore(q, out); !loaded {
			reboundCount.Add(1)
		}
	}
	return out
}

// Shared reports whether several instances may serve this database at
// once (PostgreSQL): what they must agree on (jobs, rate limits) then
// lives in the database instead of one process's memory.
func (db *DB) Shared() bool { return db.eng == enginePostgres }
