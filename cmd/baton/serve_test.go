package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestServeRefusesEveryInterfaceWithoutHosts checks the DNS-rebinding
// guard: listening on every interface without BATON_HOSTS does not start,
// and says what to set.
func TestServeRefusesEveryInterfaceWithoutHosts(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		t.Run(addr, func(t *testing.T) {
			var stderr syncBuffer
			err := run(context.Background(), []string{"serve", "--addr", addr, "--db", filepath.Join(t.TempDir(), "baton.db")},
				env(), strings.NewReader(""), io.Discard, &stderr)
			var ec *exitCodeError
			if !errors.As(err, &ec) || ec.code != 2 {
				t.Fatalf("run=%v, want exit code 2", err)
			}
			if !strings.Contains(err.Error(), "BATON_HOSTS") {
				t.Fatalf("error %q does not name BATON_HOSTS", err)
			}
		})
	}
}

func TestAllowedHosts(t *testing.T) {
	tests := []struct {
		vars map[string]string
		addr string
		want string // joined; "error" for a refusal
	}{
		{nil, "127.0.0.1:8080", "127.0.0.1"},
		{nil, "0.0.0.0:8080", "error"},
		{nil, ":8080", "error"},
		{map[string]string{"BATON_HOSTS": "baton.example.com, b2"}, "0.0.0.0:8080", "baton.example.com,b2"},
		{map[string]string{"BATON_PUBLIC_URL": "https://baton.example.com/"}, ":8080", "baton.example.com"},
		{map[string]string{"BATON_PUBLIC_URL": "ftp://x"}, "127.0.0.1:8080", "error"},
	}
	for _, tt := range tests {
		cfg, err := serveConfig(t, tt.vars, "--addr", tt.addr)
		if err != nil {
			t.Fatal(err)
		}
		hosts, err := cfg.allowedHosts()
		got := strings.Join(hosts, ",")
		if err != nil {
			got = "error"
		}
		if got != tt.want {
			t.Errorf("%v --addr %s: hosts=%q (err %v), want %q", tt.vars, tt.addr, got, err, tt.want)
		}
	}
}

func TestAuthConfig(t *testing.T) {
	cfg, err := serveConfig(t, map[string]string{"BATON_PUBLIC_URL": "https://baton.example.com", "BATON_SESSION_IDLE": "2d"},
		"--addr", "10.0.0.5:8080", "--session-lifetime", "14d")
	if err != nil {
		t.Fatal(err)
	}
	a, err := cfg.authConfig()
	if err != nil {
		t.Fatal(err)
	}
	if !a.SecureCookies || a.SessionIdle != 48*time.Hour || a.SessionLifetime != 14*24*time.Hour || len(a.SetupCode) != 10 {
		t.Fatalf("authConfig=%+v, want secure cookies, 2d idle, 14d lifetime and a setup code", a)
	}
	cfg, _ = serveConfig(t, nil, "--addr", "127.0.0.1:8080")
	if a, err = cfg.authConfig(); err != nil || a.SecureCookies || a.SetupCode != "" ||
		a.SessionIdle != 7*24*time.Hour || a.SessionLifetime != 30*24*time.Hour {
		t.Fatalf("loopback authConfig=%+v, %v; want defaults, no setup code, plain cookies", a, err)
	}
	for _, vars := range []map[string]string{{"BATON_SESSION_IDLE": "soon"}, {"BATON_SESSION_IDLE": "40d"}} {
		cfg, _ = serveConfig(t, vars)
		if _, err := cfg.authConfig(); err == nil {
			t.Errorf("%v: authConfig accepted it", vars)
		}
	}
}

// TestServeSetupCode starts Baton on every interface (with BATON_HOSTS):
// the log shows a one-time setup code, and /setup refuses to make the
// owner without it.
func TestServeSetupCode(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, []string{"serve", "--addr", "0.0.0.0:0", "--db", filepath.Join(t.TempDir(), "baton.db")},
			env("BATON_HOSTS", "baton.example.com"), strings.NewReader(""), io.Discard, &stderr)
	}()
	ready := regexp.MustCompile(`url=http://\S+:(\d+)`)
	var port string
	for deadline := time.Now().Add(10 * time.Second); port == ""; {
		select {
		case err := <-errc:
			t.Fatalf("run returned %v before it was ready; stderr:\n%s", err, stderr.String())
		default:
		}
		if m := ready.FindStringSubmatch(stderr.String()); m != nil {
			port = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no ready line within 10s; stderr:\n%s", stderr.String())
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
	m := regexp.MustCompile(`setup_code=([A-Z2-9]{10})`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no setup code in the log:\n%s", stderr.String())
	}
	client := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer client.CloseIdleConnections()
	setup := func(code string) int {
		t.Helper()
		form := url.Values{"name": {"Ana"}, "email": {"ana@example.com"}, "password": {"correct horse battery"}, "workspace": {"Acme"}, "code": {code}}
		req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:"+port+"/setup", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if got := setup("WRONGCODE2"); got != http.StatusForbidden {
		t.Fatalf("setup with a wrong code: status %d, want 403", got)
	}
	if got := setup(strings.ToLower(m[1])); got != http.StatusSeeOther {
		t.Fatalf("setup with the logged code: status %d, want 303", got)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("run after cancel: %v", err)
	}
}
