package store

import (
	"context"
	"database/sql"
)

// preparedTx runs a read transaction's queries through the cached prepared
// statements of the read pool: database/sql prepares each statement once
// per connection, where a plain tx.QueryContext prepares on every call
// (for SQLite that costs as much as running the query).
type preparedTx struct {
	db *DB
	tx *txn
}

// QueryContext runs q in the transaction as a prepared statement.
func (p preparedTx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := p.db.readStmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return p.tx.StmtContext(ctx, st).QueryContext(ctx, p.tx.eng.args(args)...)
}

// QueryRowContext is QueryContext for a single row.
func (p preparedTx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	st, err := p.db.readStmt(ctx, q)
	if err != nil {
		// A *sql.Row cannot be built with an error: let the transaction
		// report it the usual way.
		return p.tx.QueryRowContext(ctx, q, args...)
	}
	return p.tx.StmtContext(ctx, st).QueryRowContext(ctx, p.tx.eng.args(args)...)
}
