package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
)

// The PostgreSQL settings come from the environment; a bad one stops the
// command before anything is opened, naming the variable.
func TestDBOptionsFromEnv(t *testing.T) {
	cfg, err := serveConfig(t, map[string]string{"BATON_DB": "postgres://u@h/db", "BATON_DB_MAX_CONNS": "25",
		"BATON_DB_STATEMENT_TIMEOUT": "5s", "BATON_DB_LOCK_TIMEOUT": "750ms"})
	if err != nil {
		t.Fatal(err)
	}
	want := store.Options{MaxConns: 25, StatementTimeout: 5 * time.Second, LockTimeout: 750 * time.Millisecond}
	if cfg.DB != "postgres://u@h/db" || cfg.DBOptions != want {
		t.Fatalf("db %q options %+v, want %+v", cfg.DB, cfg.DBOptions, want)
	}
	for k, v := range map[string]string{"BATON_DB_MAX_CONNS": "lots", "BATON_DB_STATEMENT_TIMEOUT": "30", "BATON_DB_LOCK_TIMEOUT": "-1s"} {
		cfg, _ := serveConfig(t, map[string]string{k: v})
		_, err := cfg.openDB(context.Background())
		if err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%q: openDB error %v, want one naming the variable", k, v, err)
		}
	}
}

// BATON_SESSION_KEY, when set, is the key every instance signs cookies
// with; unset, the key kept in the database is made once and read back.
func TestSessionKey(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	hexKey := strings.Repeat("ab", 32)
	if k, err := sessionKey(ctx, db, hexKey); err != nil || hex.EncodeToString(k) != hexKey {
		t.Fatalf("hex key: %x, %v", k, err)
	}
	long := "a passphrase of more than thirty-two characters"
	if k, err := sessionKey(ctx, db, long); err != nil || string(k) != long {
		t.Fatalf("text key: %q, %v", k, err)
	}
	if _, err := sessionKey(ctx, db, "short"); err == nil || !strings.Contains(err.Error(), "BATON_SESSION_KEY") {
		t.Fatalf("short key: %v, want an error naming BATON_SESSION_KEY", err)
	}
	first, err := sessionKey(ctx, db, "")
	if err != nil || len(first) != 32 {
		t.Fatalf("stored key: %x, %v", first, err)
	}
	again, err := sessionKey(ctx, db, "")
	if err != nil || !bytes.Equal(first, again) {
		t.Fatalf("second read of the stored key = %x, want %x", again, first)
	}
}

// baton migrate-data copies an installation and prints the counts; a
// second run into the now full database is refused; bad arguments exit 2.
func TestMigrateData(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "baton.db")
	src, err := store.Open(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	storetest.FrozenSnapshot(t, src, storetest.Items{Decisions: storetest.Decisions("Use Postgres.")})
	src.Close()
	url := storetest.StartPostgres(t)

	var out, errOut bytes.Buffer
	if err := run(ctx, []string{"migrate-data", "--from", file, "--to", url}, env(), nil, &out, &errOut); err != nil {
		t.Fatalf("migrate-data: %v\n%s", err, errOut.String())
	}
	for _, want := range []string{"snapshots", "decisions", "1 snapshots verified (sha256)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	err = run(ctx, []string{"migrate-data", "--from", file, "--to", url}, env(), nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("second copy: %v, want a refusal naming a non-empty target", err)
	}
	for _, args := range [][]string{{"--from", file, "--to", file}, {"--from", url, "--to", url}, {"--from", file + ".missing", "--to", url}} {
		var ec *exitCodeError
		if err := run(ctx, append([]string{"migrate-data"}, args...), env(), nil, io.Discard, io.Discard); !errors.As(err, &ec) || ec.code != 2 {
			t.Errorf("migrate-data %v: %v, want exit code 2", args, err)
		}
	}
}
