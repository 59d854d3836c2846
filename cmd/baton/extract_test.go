package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/agent/offline"
)

// offlineOnly knows the offline provider, which is also the default ("").
func offlineOnly(name string) (agent.Extractor, error) {
	if name == "offline" || name == "" {
		return offline.New(), nil
	}
	return nil, errors.New("unknown provider")
}

const caseJSON = `{"title": "ignored", "messages": [
  {"role": "user", "content": "Which signing? Files: server/src/app.ts and /etc/passwd."},
  {"role": "assistant", "content": "HS256 or RS256."},
  {"role": "user", "content": "Let's go with HS256."}
], "gold": {"decisions": []}}`

func TestRunExtract(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", caseJSON)
	tests := []struct {
		name     string
		args     []string
		stdin    string
		wantCode int    // 0: success
		wantErr  string // on stderr
	}{
		{name: "file", args: []string{good}},
		{name: "explicit provider", args: []string{"--provider", "offline", good}},
		{name: "stdin", args: []string{"-"}, stdin: caseJSON},
		{name: "missing file", args: []string{filepath.Join(dir, "nope.json")}, wantCode: 1, wantErr: "nope.json"},
		{name: "invalid json", args: []string{write("bad.json", `{"messages": [`)}, wantCode: 1, wantErr: "not a JSON object"},
		{name: "no messages", args: []string{write("none.json", `{"msgs": []}`)}, wantCode: 1, wantErr: `no "messages" array`},
		{name: "bad role", args: []string{write("role.json", `{"messages": [{"role": "system", "content": "x"}]}`)}, wantCode: 1, wantErr: "messages[0]: role"},
		{name: "missing content", args: []string{write("content.json", `{"messages": [{"role": "user"}]}`)}, wantCode: 1, wantErr: "messages[0]: content"},
		{name: "unknown provider", args: []string{"--provider", "nope", good}, wantCode: 1, wantErr: `provider "nope"`},
		{name: "no file", args: nil, wantCode: 2, wantErr: "usage: baton extract"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := runExtract(context.Background(), tt.args, strings.NewReader(tt.stdin), &stdout, &stderr, offlineOnly)
			if tt.wantCode == 0 {
				if err != nil {
					t.Fatalf("runExtract: %v (stderr %q)", err, stderr.String())
				}
				var x agent.Extraction
				if err := json.Unmarshal(stdout.Bytes(), &x); err != nil {
					t.Fatalf("stdout is not an extraction: %v\n%s", err, stdout.String())
				}
				if len(x.FilesReferenced) != 1 || x.FilesReferenced[0].Path != "server/src/app.ts" {
					t.Fatalf("files=%v, want only server/src/app.ts", x.FilesReferenced)
				}
				if len(x.Decisions) == 0 || !strings.Contains(stdout.String(), "\n  \"decisions\"") {
					t.Fatalf("want indented JSON with a decision:\n%s", stdout.String())
				}
				return
			}
			var ec *exitCodeError
			if !errors.As(err, &ec) || ec.code != tt.wantCode {
				t.Fatalf("err=%v, want exit code %d", err, tt.wantCode)
			}
			if !strings.Contains(stderr.String(), tt.wantErr) {
				t.Fatalf("stderr=%q, want it to contain %q", stderr.String(), tt.wantErr)
			}
			if stdout.Len() != 0 {
				t.Fatalf("stdout=%q, want nothing", stdout.String())
			}
		})
	}
}
