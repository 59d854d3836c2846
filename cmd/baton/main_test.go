package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func exitCode(err error) int {
	var ec *exitCodeError
	if errors.As(err, &ec) {
		return ec.code
	}
	if err != nil {
		return 1
	}
	return 0
}

func TestRunCommands(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"version", []string{"version"}, 0, "baton dev", ""},
		{"unknown command", []string{"frobnicate"}, 2, "", "unknown command"},
		{"unknown flag", []string{"serve", "--nope"}, 2, "", "flag provided but not defined"},
		{"unexpected argument", []string{"serve", "extra"}, 2, "", "unexpected argument"},
		{"unknown provider", []string{"serve", "--provider", "magic"}, 2, "", ""},
		{"help", []string{"help"}, 0, "Commands:", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, env("BATON_DB", filepath.Join(t.TempDir(), "b.db")), strings.NewReader(""), &stdout, &stderr)
			if got := exitCode(err); got != tt.wantCode {
				t.Fatalf("exit code=%d (err %v), want %d", got, err, tt.wantCode)
			}
			if !strings.Contains(stdout.String(), tt.wantStdout) {
				t.Fatalf("stdout=%q, want it to contain %q", stdout.String(), tt.wantStdout)
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Fatalf("stderr=%q, want it to contain %q", stderr.String(), tt.wantStderr)
			}
		})
	}
}

// TestServeBadDatabase checks that a database that cannot be opened stops
// start-up with an error naming the path.
func TestServeBadDatabase(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.db")
	os.WriteFile(junk, bytes.Repeat([]byte("not sqlite\n"), 500), 0o644)
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	for name, path := range map[string]string{
		"not a sqlite file": junk,
		"a directory":       dir,
		"under a file":      filepath.Join(file, "baton.db"),
	} {
		t.Run(name, func(t *testing.T) {
			var stderr bytes.Buffer
			err := run(context.Background(), []string{"serve", "--db", path, "--addr", "127.0.0.1:0"}, env(), nil, io.Discard, &stderr)
			if err == nil || !strings.Contains(err.Error(), path) {
				t.Fatalf("err=%v, want an error naming %s", err, path)
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe for the server's logger and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServeAndShutdown starts the real server, waits for its ready line,
// checks /healthz and shuts it down by cancelling the context (SIGINT).
func TestServeAndShutdown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	db := filepath.Join(t.TempDir(), "data", "baton.db")
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--addr", "127.0.0.1:0"}, env("BATON_DB", db), nil, io.Discard, &stderr)
	}()

	urlRE := regexp.MustCompile(`url=(http://\S+)`)
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		sc := bufio.NewScanner(strings.NewReader(stderr.String()))
		for sc.Scan() {
			if m := urlRE.FindStringSubmatch(sc.Text()); m != nil && strings.Contains(sc.Text(), "baton ready") {
				base = m[1]
			}
		}
	}
	if base == "" {
		t.Fatalf("no ready line; stderr:\n%s", stderr.String())
	}
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"provider":"offline"`) {
		t.Fatalf("healthz: %d %s, want 200 naming the offline provider", resp.StatusCode, body)
	}
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("database file not created: %v", err)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run after shutdown: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("server did not shut down")
	}
	if !strings.Contains(stderr.String(), "shutting down") {
		t.Fatalf("no shutdown log line; stderr:\n%s", stderr.String())
	}
}

// TestExtractUsesBatonProvider checks that `baton extract` without
// --provider follows BATON_PROVIDER, like serve does.
func TestExtractUsesBatonProvider(t *testing.T) {
	var stderr bytes.Buffer
	err := run(context.Background(), []string{"extract", "-"}, env("BATON_PROVIDER", "anthropic"),
		strings.NewReader(`{"messages":[{"role":"user","content":"hi"}]}`), io.Discard, &stderr)
	if err == nil || !strings.Contains(stderr.String()+err.Error(), "ANTHROPIC_API_KEY") {
		t.Fatalf("err=%v stderr=%q, want the anthropic provider asking for ANTHROPIC_API_KEY", err, stderr.String())
	}
}
