package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// CopyCount is how many rows of one table a copy read and wrote.
type CopyCount struct {
	Table        string
	Source, Dest int
}

// CopyReport says what CopyDatabase copied.
type CopyReport struct {
	Tables    []CopyCount
	Snapshots int // snapshots whose sha256 was verified in the target
}

// CopyDatabase copies every row of src, a SQLite database, into dst, an
// empty PostgreSQL database (Open has migrated it), in one transaction:
// ids, hashes and timestamps as they are. It refuses a target that holds
// anything but the default workspace Open made, and a source column the
// target has no place for. After copying it compares the row counts of
// every table and recomputes every snapshot's sha256 in the target; any
// difference undoes the copy.
func CopyDatabase(ctx context.Context, src, dst *DB) (*CopyReport, error) {
	if src.eng != engineSQLite || dst.eng != enginePostgres {
		return nil, Errorf(EINVALID, "Copy from a SQLite file to a PostgreSQL database (got %s to %s).", src.eng, dst.eng)
	}
	tables, err := tableColumns(ctx, dst)
	if err != nil {
		return nil, err
	}
	if err := refuseNonEmpty(ctx, dst, tables); err != nil {
		return nil, err
	}
	srcTables, err := tableColumns(ctx, src)
	if err != nil {
		return nil, err
	}
	for name := range srcTables {
		if _, ok := tables[name]; !ok {
			return nil, Errorf(EINVALID, "The source has a table %q that the target lacks: migrate both to the same Baton version first.", name)
		}
	}
	report := &CopyReport{}
	err = dst.inTx(ctx, func(tx *txn) error {
		report.Tables, report.Snapshots = nil, 0
		// Rows refer to rows of other tables (and of their own) in any
		// order: the references are checked at commit.
		if _, err := tx.ExecContext(ctx, `SET CONSTRAINTS ALL DEFERRED`); err != nil {
			return err
		}
		// What Open wrote into the new database makes way for the source's.
		for _, q := range []string{`DELETE FROM settings`, `DELETE FROM workspaces`} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		names := sortedKeys(tables)
		for _, name := range names {
			cols, ok := srcTables[name]
			if !ok {
				continue
			}
			for _, c := range cols {
				if !slices.Contains(tables[name], c) {
					return Errorf(EINVALID, "Column %s.%s of the source has no place in the target: migrate both to the same Baton version first.", name, c)
				}
			}
			n, err := copyTable(ctx, src, tx, name, cols)
			if err != nil {
				return fmt.Errorf("copy %s: %w", name, err)
			}
			var got int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+quoteIdent(name)).Scan(&got); err != nil {
				return err
			}
			if got != n {
				return Errorf(EINTERNAL, "Table %s: read %d rows from the source but the target holds %d; nothing was copied.", name, n, got)
			}
			report.Tables = append(report.Tables, CopyCount{Table: name, Source: n, Dest: got})
			if slices.Contains(cols, "rid") {
				if _, err := tx.ExecContext(ctx, `SELECT setval(pg_get_serial_sequence('`+name+`', 'rid'), COALESCE(MAX(rid), 0) + 1, false) FROM `+quoteIdent(name)); err != nil {
					return fmt.Errorf("advance %s.rid: %w", name, err)
				}
			}
		}
		var err error
		report.Snapshots, err = verifySnapshots(ctx, tx)
		return err
	})
	if err != nil {
		return nil, err
	}
	return report, nil
}

// tableColumns lists db's tables and their columns, in order, leaving out
// the engine's own tables, goose's, SQLite's full-text indexes and
// PostgreSQL's generated columns (each engine keeps its own index).
func tableColumns(ctx context.Context, db *DB) (map[string][]string, error) {
	q := `SELECT m.name, p.name FROM sqlite_schema m, pragma_table_info(m.name) p
		WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.name <> 'goose_db_version'
		  AND m.sql NOT LIKE 'CREATE VIRTUAL TABLE%' AND m.name NOT LIKE '%_fts_%'
		ORDER BY m.name, p.cid`
	if db.eng == enginePostgres {
		q = `SELECT c.table_name, c.column_name FROM information_schema.columns c
		JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
		WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
		  AND c.is_generated = 'NEVER' AND c.table_name <> 'goose_db_version'
		ORDER BY c.table_name, c.ordinal_position`
	}
	rows, err := db.read.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("list the tables of %s: %w", db.path, err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var t, c string
		if err := rows.Scan(&t, &c); err != nil {
			return nil, err
		}
		out[t] = append(out[t], c)
	}
	return out, rows.Err()
}

// refuseNonEmpty fails unless the target holds nothing but what Open
// writes into a new database: one workspace and settings.
func refuseNonEmpty(ctx context.Context, db *DB, tables map[string][]string) error {
	for _, name := range sortedKeys(tables) {
		var n int
		if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+quoteIdent(name)).Scan(&n); err != nil {
			return fmt.Errorf("count %s: %w", name, err)
		}
		limit := 0
		switch name {
		case "workspaces":
			limit = 1 // the default workspace Open made
		case "settings":
			continue
		}
		if n > limit {
			return Errorf(ECONFLICT, "The target database is not empty (table %s has %d rows): copy into a new, empty PostgreSQL database.", name, n)
		}
	}
	return nil
}

// copyBatchParams caps the parameters of one INSERT (PostgreSQL allows
// 65,535).
const copyBatchParams = 30000

// copyTable copies every row of table from src into tx and returns how
// many it read.
func copyTable(ctx context.Context, src *DB, tx *txn, table string, cols []string) (int, error) {
	rows, err := src.read.QueryContext(ctx, `SELECT `+strings.Join(quoteAll(cols), ", ")+` FROM `+quoteIdent(table))
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	per := max(1, copyBatchParams/len(cols))
	var (
		n     int
		batch []any
	)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		k := len(batch) / len(cols)
		row := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
		q := `INSERT INTO ` + quoteIdent(table) + ` (` + strings.Join(quoteAll(cols), ", ") + `) VALUES ` +
			strings.TrimSuffix(strings.Repeat(row+", ", k), ", ")
		_, err := tx.ExecContext(ctx, q, batch...)
		batch = batch[:0]
		return err
	}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return 0, err
		}
		batch = append(batch, vals...)
		n++
		if n%per == 0 {
			if err := flush(); err != nil {
				return 0, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	return n, flush()
}

// verifySnapshots recomputes the sha256 of every snapshot's payload in tx
// and returns how many it checked.
func verifySnapshots(ctx context.Context, tx *txn) (int, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, payload, sha256 FROM snapshots`)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id, payload, sum string
		if err := rows.Scan(&id, &payload, &sum); err != nil {
			return 0, err
		}
		got := sha256.Sum256([]byte(payload))
		if hex.EncodeToString(got[:]) != sum {
			return 0, Errorf(EINTERNAL, "Snapshot %s does not match its sha256 after the copy; nothing was copied.", id)
		}
		n++
	}
	return n, rows.Err()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// quoteIdent quotes a table or column name for SQL.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = quoteIdent(n)
	}
	return out
}

// TableCounts returns the number of rows of every table of Baton's schema
// (the engine's own tables and full-text indexes aside), by table name.
func (db *DB) TableCounts(ctx context.Context) (map[string]int, error) {
	tables, err := tableColumns(ctx, db)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int, len(tables))
	for name := range tables {
		var n int
		if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+quoteIdent(name)).Scan(&n); err != nil {
			return nil, fmt.Errorf("count %s: %w", name, err)
		}
		out[name] = n
	}
	return out, nil
}
