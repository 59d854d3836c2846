package web_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/baton-dev/baton/agent/offline"
	"github.com/baton-dev/baton/web"
)

// TestRequestsFromElsewhere checks the refusals that keep other sites and
// DNS-rebinding pages away from a local Baton, and that nothing is created.
func TestRequestsFromElsewhere(t *testing.T) {
	app := newApp(t, offline.New())
	form := url.Values{"title": {"planted"}, "_csrf": {"abc"}}.Encode()
	tests := []struct {
		name   string
		method string
		path   string
		body   string
		header http.Header
		host   string
		want   int
	}{
		{"same-site form with a planted token cookie", "POST", "/threads", form, http.Header{
			"Content-Type": {"application/x-www-form-urlencoded"}, "Sec-Fetch-Site": {"same-site"},
			"Origin": {"http://localhost:3000"}, "Cookie": {"baton_csrf=abc"}}, "", http.StatusForbidden},
		{"rebound host name", "POST", "/api/v1/threads", `{"title":"x"}`, http.Header{
			"Content-Type": {"application/json"}, "Sec-Fetch-Site": {"same-origin"}}, "evil.example", http.StatusMisdirectedRequest},
		{"rebound host name, page", "GET", "/", "", nil, "evil.example:8080", http.StatusMisdirectedRequest},
		{"api: another origin, empty body", "POST", "/api/v1/threads", "", http.Header{
			"Origin": {"http://evil.example"}}, "", http.StatusForbidden},
		{"api: form content type, empty body", "POST", "/api/v1/threads", "", http.Header{
			"Content-Type": {"application/x-www-form-urlencoded"}}, "", http.StatusUnsupportedMediaType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := app.newRequest(tt.method, tt.path, strings.NewReader(tt.body), tt.header)
			if tt.host != "" {
				req.Host = tt.host
			}
			res, body := app.do(req)
			if res.StatusCode != tt.want {
				t.Fatalf("Status=%d, want %d; body: %.200s", res.StatusCode, tt.want, body)
			}
		})
	}
	if threads := app.threads(); len(threads) != 0 {
		t.Fatalf("%d threads created, want none", len(threads))
	}

	// The same API request from the page's own origin goes through.
	req := app.newRequest("POST", "/api/v1/threads", strings.NewReader(`{"title":"ok"}`), http.Header{
		"Content-Type": {"application/json"}, "Origin": {app.TS.URL}})
	if res, body := app.do(req); res.StatusCode != http.StatusCreated {
		t.Fatalf("same-origin API call: Status=%d, want 201; body: %s", res.StatusCode, body)
	}
}

// TestConfiguredHosts checks that BATON_HOSTS names are answered.
func TestConfiguredHosts(t *testing.T) {
	app := newAppWith(t, web.Config{Provider: offline.New(), Hosts: []string{"baton.internal"}})
	req := app.newRequest("GET", "/healthz", nil, nil)
	req.Host = "baton.internal:8080"
	if res, _ := app.do(req); res.StatusCode != http.StatusOK {
		t.Fatalf("configured host: Status=%d, want 200", res.StatusCode)
	}
}

// threads lists the IDs of the workspace's threads through the API.
func (a *testApp) threads() []string {
	a.t.Helper()
	_, body := a.get("/api/v1/threads")
	var out struct {
		Threads []struct{ ID string }
	}
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		a.t.Fatalf("threads: %v", err)
	}
	var ids []string
	for _, th := range out.Threads {
		ids = append(ids, th.ID)
	}
	return ids
}
