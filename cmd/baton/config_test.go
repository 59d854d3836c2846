package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/agent/offline"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
)

// envOf is env (main_test.go) over a map.
func envOf(vars map[string]string) func(string) string {
	var kv []string
	for k, v := range vars {
		kv = append(kv, k, v)
	}
	return env(kv...)
}

// serveConfig reads the environment and serve's flags, as runServe does.
func serveConfig(t *testing.T, vars map[string]string, args ...string) (*config, error) {
	t.Helper()
	var cfg config
	cfg.fromEnv(envOf(vars))
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	cfg.flags(fs, true)
	return &cfg, parseFlags(fs, args, io.Discard)
}

func TestNewProvider(t *testing.T) {
	tests := []struct {
		name      string
		env       map[string]string
		args      []string
		wantName  string
		wantModel string
		wantCode  int      // exit code of the error, when one is wanted
		wantErr   []string // what the error must name
	}{
		{name: "offline by default", wantName: "offline", wantModel: "offline-digest"},
		{name: "anthropic without key", args: []string{"--provider", "anthropic"},
			wantCode: 1, wantErr: []string{"ANTHROPIC_API_KEY", "BATON_PROVIDER=offline"}},
		{name: "anthropic from the environment without key", env: map[string]string{"BATON_PROVIDER": "anthropic"},
			wantCode: 1, wantErr: []string{"ANTHROPIC_API_KEY", "BATON_PROVIDER=offline"}},
		{name: "anthropic with key", env: map[string]string{"ANTHROPIC_API_KEY": "sk-ant-x", "BATON_MODEL": "claude-haiku-4-5"},
			args: []string{"--provider", "anthropic"}, wantName: "anthropic", wantModel: "claude-haiku-4-5"},
		{name: "openai without key", args: []string{"--provider", "openai"},
			wantCode: 1, wantErr: []string{"OPENAI_API_KEY", "BATON_PROVIDER=offline"}},
		{name: "openai-compatible server needs no key", env: map[string]string{"OPENAI_BASE_URL": "http://localhost:11434/v1"},
			args: []string{"--provider", "openai", "--model", "llama3.2"}, wantName: "openai", wantModel: "llama3.2"},
		{name: "flag overrides the environment", env: map[string]string{"BATON_PROVIDER": "anthropic"},
			args: []string{"--provider", "offline"}, wantName: "offline", wantModel: "offline-digest"},
		{name: "provider name in capitals", env: map[string]string{"BATON_PROVIDER": "OpenAI", "OPENAI_API_KEY": "sk-x"},
			wantName: "openai", wantModel: "gpt-4.1-mini"},
		{name: "unknown provider", args: []string{"--provider", "gemini"},
			wantCode: 2, wantErr: []string{`"gemini"`, "offline, anthropic or openai"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := serveConfig(t, tt.env, tt.args...)
			if err != nil {
				t.Fatalf("flags: %v", err)
			}
			p, err := cfg.newProvider(nil)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("newProvider=%s, want an error", p.Name())
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Fatalf("err=%q, want it to name %s", err, s)
					}
				}
				if code := exitCode(err); code != tt.wantCode {
					t.Fatalf("exit code=%d, want %d (err %v)", code, tt.wantCode, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("newProvider: %v", err)
			}
			if got, want := p.Name(), tt.wantName; got != want {
				t.Fatalf("Name=%q, want %q", got, want)
			}
			if got, want := p.Model(), tt.wantModel; got != want {
				t.Fatalf("Model=%q, want %q", got, want)
			}
		})
	}
}

// TestServeProviderErrors checks what a person starting Baton sees when the
// provider is wrong: a message naming what to set, the exit code, and no
// database file made on the way.
func TestServeProviderErrors(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		args     []string
		wantCode int
		wantErr  []string
	}{
		{"anthropic without key", nil, []string{"--provider", "anthropic"}, 1, []string{"ANTHROPIC_API_KEY", "BATON_PROVIDER=offline"}},
		{"unknown provider", map[string]string{"BATON_PROVIDER": "llama"}, nil, 2, []string{`"llama"`, "BATON_PROVIDER"}},
		{"token budget not a number", map[string]string{"BATON_TOKEN_BUDGET": "lots"}, nil, 2, []string{"BATON_TOKEN_BUDGET", `"lots"`}},
		{"token budget flag not a number", nil, []string{"--token-budget", "lots"}, 2, []string{"token-budget"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dbPath := filepath.Join(t.TempDir(), "baton.db")
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--db", dbPath}, tt.args...)
			var stderr bytes.Buffer
			err := run(context.Background(), args, envOf(tt.env), strings.NewReader(""), io.Discard, &stderr)
			if err == nil {
				t.Fatalf("run returned nil, want an error")
			}
			if code := exitCode(err); code != tt.wantCode {
				t.Fatalf("exit code=%d, want %d (err %v)", code, tt.wantCode, err)
			}
			for _, s := range tt.wantErr {
				if !strings.Contains(err.Error()+stderr.String(), s) {
					t.Fatalf("err=%q stderr=%q, want them to name %s", err, stderr.String(), s)
				}
			}
			if tt.name == "anthropic without key" || tt.name == "unknown provider" {
				if _, err := os.Stat(dbPath); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("database file: %v, want none made before the provider is known good", err)
				}
			}
		})
	}
}

func TestTokenBudgetConfig(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		args     []string
		provider string
		want     int64
		wrapped  bool
		wantCode int // 0: no error
	}{
		{name: "off by default", provider: "anthropic"},
		{name: "from the environment", env: map[string]string{"BATON_TOKEN_BUDGET": "1000000"}, provider: "anthropic", want: 1_000_000, wrapped: true},
		{name: "with underscores", env: map[string]string{"BATON_TOKEN_BUDGET": "2_500_000"}, provider: "anthropic", want: 2_500_000, wrapped: true},
		{name: "zero is off", env: map[string]string{"BATON_TOKEN_BUDGET": "0"}, provider: "anthropic"},
		{name: "flag", args: []string{"--token-budget", "5000"}, provider: "openai", want: 5000, wrapped: true},
		{name: "flag overrides the environment", env: map[string]string{"BATON_TOKEN_BUDGET": "9"}, args: []string{"--token-budget", "0"}, provider: "anthropic"},
		{name: "flag overrides a bad environment", env: map[string]string{"BATON_TOKEN_BUDGET": "lots"}, args: []string{"--token-budget", "10"}, provider: "anthropic", want: 10, wrapped: true},
		{name: "offline is never limited", env: map[string]string{"BATON_TOKEN_BUDGET": "10"}, provider: "offline", want: 10},
		{name: "environment not a number", env: map[string]string{"BATON_TOKEN_BUDGET": "1e6"}, provider: "anthropic", wantCode: 2},
		{name: "environment negative", env: map[string]string{"BATON_TOKEN_BUDGET": "-5"}, provider: "anthropic", wantCode: 2},
	}
	db := storetest.MustOpen(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := serveConfig(t, tt.env, tt.args...)
			if err != nil {
				t.Fatalf("flags: %v", err)
			}
			var p agent.Provider = namedModel(tt.provider)
			if tt.provider == "offline" {
				p = offline.New()
			}
			got, err := cfg.withBudget(p, db)
			if tt.wantCode != 0 {
				if exitCode(err) != tt.wantCode {
					t.Fatalf("err=%v, want exit code %d", err, tt.wantCode)
				}
				if !strings.Contains(err.Error(), "BATON_TOKEN_BUDGET") {
					t.Fatalf("err=%q, want it to name BATON_TOKEN_BUDGET", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("withBudget: %v", err)
			}
			if cfg.TokenBudget != tt.want {
				t.Fatalf("TokenBudget=%d, want %d", cfg.TokenBudget, tt.want)
			}
			if wrapped := got != p; wrapped != tt.wrapped {
				t.Fatalf("wrapped=%v, want %v", wrapped, tt.wrapped)
			}
		})
	}

	t.Run("flag below zero", func(t *testing.T) {
		_, err := serveConfig(t, nil, "--token-budget", "-1")
		if exitCode(err) != 2 {
			t.Fatalf("err=%v, want exit code 2", err)
		}
	})
}

// namedModel is a provider that only has a name; the budget wiring never
// calls it.
type namedModel string

func (m namedModel) Name() string  { return string(m) }
func (m namedModel) Model() string { return string(m) + "-1" }
func (m namedModel) Stream(context.Context, agent.Request, func(agent.Delta) error) (*agent.Reply, error) {
	return nil, errors.New("not called in these tests")
}

// openAICompatible is an OpenAI-compatible server (as Ollama is) on
// httptest: every chat completion streams "Hello!" and reports 19 input and
// 10 output tokens.
func openAICompatible(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	calls := new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "" {
			http.Error(w, `{"error":{"message":"unexpected request","type":"invalid_request_error"}}`, http.StatusBadRequest)
			return
		}
		calls.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(choices, usage string) {
			fmt.Fprintf(w, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741569952,"model":"llama3.2","choices":[%s],"usage":%s}`+"\n\n", choices, usage)
			w.(http.Flusher).Flush()
		}
		chunk(`{"index":0,"delta":{"role":"assistant","content":"Hello"},"finish_reason":null}`, "null")
		chunk(`{"index":0,"delta":{"content":"!"},"finish_reason":null}`, "null")
		chunk(`{"index":0,"delta":{},"finish_reason":"stop"}`, "null")
		chunk("", `{"prompt_tokens":19,"completion_tokens":10,"total_tokens":29}`)
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv, calls
}

// TestServe starts the real command in-process against an OpenAI-compatible
// fake, as the README's Ollama example runs it, with a token budget: health
// shows the provider and model, the first reply spends the budget and the
// second is refused without reaching the model.
func TestServe(t *testing.T) {
	fake, calls := openAICompatible(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	vars := map[string]string{
		"BATON_PROVIDER":     "openai",
		"OPENAI_BASE_URL":    fake.URL + "/v1",
		"BATON_MODEL":        "llama3.2",
		"BATON_TOKEN_BUDGET": "29",
	}
	// The API needs a token: an account and its token, made with the CLI.
	dbPath := filepath.Join(t.TempDir(), "baton.db")
	if err := run(ctx, []string{"user", "add", "--db", dbPath, "--email", "ana@example.com", "--name", "Ana"},
		envOf(vars), strings.NewReader("correct horse battery\n"), io.Discard, io.Discard); err != nil {
		t.Fatalf("user add: %v", err)
	}
	var tokenOut bytes.Buffer
	if err := run(ctx, []string{"token", "create", "--db", dbPath, "--email", "ana@example.com", "--scope", "write"},
		envOf(vars), strings.NewReader(""), &tokenOut, io.Discard); err != nil {
		t.Fatalf("token create: %v", err)
	}
	token := strings.TrimSpace(tokenOut.String())
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--db", dbPath},
			envOf(vars), strings.NewReader(""), io.Discard, &stderr)
	}()

	// The ready line names the address the server listens on.
	ready := regexp.MustCompile(`url=(http://\S+)`)
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == ""; {
		select {
		case err := <-errc:
			t.Fatalf("run returned %v before it was ready; stderr:\n%s", err, stderr.String())
		default:
		}
		if m := ready.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no ready line within 10s; stderr:\n%s", stderr.String())
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()

	res, err := client.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	var health map[string]any
	err = json.NewDecoder(res.Body).Decode(&health)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"status": "ok", "provider": "openai", "model": "llama3.2"} {
		if got := health[k]; got != want {
			t.Fatalf("healthz %s=%v, want %q (%v)", k, got, want, health)
		}
	}

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
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("POST %s: Status=%d, want %d: %v", path, res.StatusCode, http.StatusCreated, out)
		}
		return out
	}
	thread := post("/api/v1/threads", `{"title":"Budget"}`)
	path := fmt.Sprintf("/api/v1/threads/%s/messages", thread["id"])
	first := post(path, `{"content":"Hi"}`)["assistant_message"].(map[string]any)
	if first["status"] != "complete" || first["content"] != "Hello!" {
		t.Fatalf("first reply=%v, want complete %q", first, "Hello!")
	}
	second := post(path, `{"content":"Again"}`)["assistant_message"].(map[string]any)
	why, _ := second["error"].(string)
	if second["status"] != "failed" || !strings.Contains(why, "(29 of 29 tokens)") || !strings.Contains(why, "BATON_TOKEN_BUDGET") {
		t.Fatalf("second reply=%v, want failed with the budget message", second)
	}
	if got := calls.Load(); got != 1 {
		t.Fatalf("model calls=%d, want 1", got)
	}

	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("run after cancel: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("run did not return after cancel")
	}
}

// TestExtractorAndJudge checks the wiring: the offline provider extracts
// and judges by its rules; with a model, web asks the model for both.
func TestExtractorAndJudge(t *testing.T) {
	p := offline.New()
	x, judge := extractorAndJudge(p)
	if x != agent.Extractor(p) {
		t.Fatalf("offline extractor=%T, want the offline provider", x)
	}
	old := store.DecisionRecord{Content: "Use JWT for sessions"}
	reversal := store.DecisionRecord{Content: "Use server sessions instead of JWT"}
	if got, err := judge(context.Background(), old, reversal); err != nil || got != agent.Reverses(old.Content, reversal.Content) {
		t.Fatalf("offline judge=%v, %v; want the rule's verdict", got, err)
	}

	x, judge = extractorAndJudge(namedModel("anthropic"))
	if x != nil || judge == nil {
		t.Fatalf("model: extractor=%v judge nil=%v, want no extractor (ask the model) and a judge", x, judge == nil)
	}
}
