package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/baton-dev/baton/store"
)

// runMigrateData implements `baton migrate-data --from FILE --to URL`: it
// copies a SQLite installation into an empty PostgreSQL database, then
// prints every table's row counts on both sides and how many snapshots
// were verified.
func runMigrateData(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var cfg config
	cfg.fromEnv(getenv)
	fs := flag.NewFlagSet("migrate-data", flag.ContinueOnError)
	from := fs.String("from", cfg.DB, "the SQLite database file to copy (BATON_DB)")
	to := fs.String("to", "", "the empty PostgreSQL database to copy into: postgres://user:password@host/db")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: baton migrate-data --from data/baton.db --to postgres://…\n\nCopies every table into an empty PostgreSQL database (ids, hashes and times kept), in one transaction.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if !store.IsPostgresURL(*to) {
		return &exitCodeError{code: 2, err: errors.New("--to must be a postgres:// URL of an empty database")}
	}
	if store.IsPostgresURL(*from) {
		return &exitCodeError{code: 2, err: errors.New("--from must be a SQLite database file")}
	}
	if fi, err := os.Stat(*from); err != nil || fi.IsDir() {
		return &exitCodeError{code: 2, err: fmt.Errorf("--from %s: no SQLite database file there", *from)}
	}
	src, err := store.Open(ctx, *from)
	if err != nil {
		return err
	}
	defer src.Close()
	// Runs the installation left running end as failed, as its next start
	// would have ended them: no instance on the target owns them.
	if err := src.RecoverInterrupted(ctx); err != nil {
		return err
	}
	cfg.DB = *to
	dst, err := cfg.openDB(ctx)
	if err != nil {
		return err
	}
	defer dst.Close()
	report, err := store.CopyDatabase(ctx, src, dst)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "table\tsource\ttarget\t")
	total := 0
	for _, t := range report.Tables {
		fmt.Fprintf(tw, "%s\t%d\t%d\t\n", t.Table, t.Source, t.Dest)
		total += t.Dest
	}
	tw.Flush()
	fmt.Fprintf(stdout, "copied %d rows of %d tables from %s to %s; %d snapshots verified (sha256)\n",
		total, len(report.Tables), src.Path(), dst.Path(), report.Snapshots)
	return nil
}
