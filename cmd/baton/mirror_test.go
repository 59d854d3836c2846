package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/agent/offline"
	"github.com/baton-dev/baton/store/storetest"
)

// TestSummariserWiring checks who writes handoff summaries: the rules
// offline, the model otherwise.
func TestSummariserWiring(t *testing.T) {
	if got := summariser(offline.New()); got != agent.RuleSummariser {
		t.Fatalf("offline summariser=%T, want the rules", got)
	}
	if got := summariser(namedModel("anthropic")); got == agent.RuleSummariser {
		t.Fatal("a model's summariser is the rules, want the model")
	}
}

func TestServeRefusesABadMirrorURL(t *testing.T) {
	err := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "baton.db")},
		env("BATON_MIRROR_URL", "postgres://u:secret@host:port/db"), nil, io.Discard, io.Discard)
	var ec *exitCodeError
	if !errors.As(err, &ec) || ec.code != 2 || !strings.Contains(err.Error(), "BATON_MIRROR_URL") || strings.Contains(err.Error(), "secret") {
		t.Fatalf("err=%v, want exit code 2 naming BATON_MIRROR_URL without the password", err)
	}
}

// TestServeWithMirror serves with BATON_MIRROR_URL pointing at a real
// PostgreSQL: an accepted handoff reaches thread_summaries, and /healthz
// reports the mirror.
func TestServeWithMirror(t *testing.T) {
	pgURL := storetest.StartPostgres(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dbPath := filepath.Join(t.TempDir(), "baton.db")
	// The API takes a token: make an owner and a write token with the CLI.
	if err := run(ctx, []string{"user", "add", "--db", dbPath, "--email", "ana@example.com", "--name", "Ana"}, env(),
		strings.NewReader("correct horse battery\n"), io.Discard, io.Discard); err != nil {
		t.Fatalf("user add: %v", err)
	}
	var tokenOut bytes.Buffer
	if err := run(ctx, []string{"token", "create", "--db", dbPath, "--email", "ana@example.com", "--scope", "write"}, env(),
		strings.NewReader(""), &tokenOut, io.Discard); err != nil {
		t.Fatalf("token create: %v", err)
	}
	token := strings.TrimSpace(tokenOut.String())
	var stderr syncBuffer
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--db", dbPath},
			env("BATON_MIRROR_URL", pgURL), strings.NewReader(""), io.Discard, &stderr)
	}()
	ready := regexp.MustCompile(`baton ready.*url=(http://\S+)`)
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == ""; time.Sleep(10 * time.Millisecond) {
		if m := ready.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no ready line; stderr:\n%s", stderr.String())
		}
	}
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	post := func(path, body string) map[string]any {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		json.NewDecoder(res.Body).Decode(&out)
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("POST %s: Status=%d: %v", path, res.StatusCode, out)
		}
		return out
	}
	thread := post("/api/v1/threads", `{"title":"Mirror"}`)
	post(fmt.Sprintf("/api/v1/threads/%s/messages", thread["id"]), `{"content":"Let's go with SQLite."}`)
	handoff := post(fmt.Sprintf("/api/v1/threads/%s/thread-handoffs", thread["id"]), `{"apply":true}`)

	var health struct {
		Mirror *struct {
			Status  string `json:"status"`
			Pending int    `json:"pending"`
		} `json:"mirror"`
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		res, err := client.Get(base + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		json.NewDecoder(res.Body).Decode(&health)
		res.Body.Close()
		if health.Mirror != nil && health.Mirror.Pending == 0 && health.Mirror.Status == "ok" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("healthz mirror=%+v, want ok with nothing pending", health.Mirror)
		}
	}
	conn, err := pgx.Connect(ctx, pgURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(ctx, `SELECT COUNT(*) FROM thread_summaries WHERE handoff_id = $1 AND child_thread_id = $2`,
		handoff["id"], handoff["childThreadId"]).Scan(&n); err != nil || n != 1 {
		t.Fatalf("thread_summaries rows for the handoff = %d, %v; want 1", n, err)
	}

	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("run after cancel: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("run did not return after cancel")
	}
}
