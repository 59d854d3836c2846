package store

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestCleanPath(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want string
		ok   bool
	}{
		{"plain", "server/src/app.ts", "server/src/app.ts", true},
		{"leading dot slash", "./infra/iam_ci.tf", "infra/iam_ci.tf", true},
		{"backticks", "`web/src/api/client.ts`", "web/src/api/client.ts", true},
		{"quotes and period", `"docs/plugins.md".`, "docs/plugins.md", true},
		{"trailing comma", "Cargo.toml,", "Cargo.toml", true},
		{"brackets kept inside", "app/[locale]/layout.tsx", "app/[locale]/layout.tsx", true},
		{"dotfile", ".gitignore", ".gitignore", true},
		{"directory slash", "content/blog/", "content/blog", true},
		{"parenthesised", "(reports/tasks.py)", "reports/tasks.py", true},
		{"absolute", "/etc/passwd", "", false},
		{"absolute in backticks", "`/etc/nginx/sites-enabled/api.conf`", "", false},
		{"home", "~/.config/logsift/config.toml", "", false},
		{"env var", "$HOME/x", "", false},
		{"windows env", `%APPDATA%\logsift\config.toml`, "", false},
		{"windows drive", `C:\x`, "", false},
		{"drive forward slash", "C:/x", "", false},
		{"parent", "../infra/docker-compose.workers.yml", "", false},
		{"parent inside", "a/../../x", "", false},
		{"dot segment", "a/./b", "", false},
		{"double slash", "a//b", "", false},
		{"url", "https://evil.example/x.js", "", false},
		{"mailto", "mailto:a@b.c", "", false},
		{"javascript", "javascript:alert(1)", "", false},
		{"backslash", `src\main.go`, "", false},
		{"percent-encoded parent", "a/%2e%2e/b", "", false},
		{"full-width parent", "a／．．／b", "", false},
		{"dot leaders", "a/\u2025/b", "", false},
		{"space inside", "my file.go", "", false},
		{"control", "a\x00b.go", "", false},
		{"newline", "a\nb.go", "", false},
		{"bidi override", "a\u202eb.go", "", false},
		{"empty", "", "", false},
		{"only punctuation", "`./`", "", false},
		{"too long", strings.Repeat("a", 301), "", false},
		{"longest", strings.Repeat("a", MaxPathLen), strings.Repeat("a", MaxPathLen), true},
		// MaxPathLen counts characters, not bytes: 300 two-byte letters fit.
		{"longest in characters", strings.Repeat("é", MaxPathLen), strings.Repeat("é", MaxPathLen), true},
		{"too long in characters", strings.Repeat("é", MaxPathLen+1), "", false},
		{"glob", "*.tfstate", "", false},
		{"flag", "--config", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := CleanPath(tt.raw)
			if got != tt.want || ok != tt.ok {
				t.Fatalf("CleanPath(%q)=%q,%v, want %q,%v", tt.raw, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func FuzzCleanPath(f *testing.F) {
	for _, s := range []string{
		"server/src/app.ts", "./a/b.go", "`x.md`", "/etc/passwd", "../../x", "https://evil",
		`C:\x`, "~/.ssh/id_rsa", "a/../b", "a b", "\x00", "mailto:x", "'./.'", "a/b/",
		"%APPDATA%\\x", "..", ".", "./../x", "`./../x`", "\u202e.go",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, ok := CleanPath(raw)
		if !ok {
			if got != "" {
				t.Fatalf("CleanPath(%q) rejected but returned %q", raw, got)
			}
			return
		}
		if got == "" || utf8.RuneCountInString(got) > MaxPathLen || !utf8.ValidString(got) {
			t.Fatalf("CleanPath(%q)=%q: empty, too long or invalid UTF-8", raw, got)
		}
		if strings.HasPrefix(got, "/") || strings.HasPrefix(got, "~") || strings.HasPrefix(got, "./") {
			t.Fatalf("CleanPath(%q)=%q: absolute or unstripped prefix", raw, got)
		}
		if strings.Contains(got, "://") || strings.ContainsAny(got, `\:`) {
			t.Fatalf("CleanPath(%q)=%q: URL, scheme or backslash", raw, got)
		}
		for _, seg := range strings.Split(got, "/") {
			if seg == ".." || seg == "." || seg == "" {
				t.Fatalf("CleanPath(%q)=%q: bad segment %q", raw, got, seg)
			}
		}
		for _, r := range got {
			if unicode.IsSpace(r) || unicode.IsControl(r) {
				t.Fatalf("CleanPath(%q)=%q: whitespace or control character", raw, got)
			}
		}
		if again, ok := CleanPath(got); !ok || again != got {
			t.Fatalf("CleanPath not idempotent: %q -> %q -> %q,%v", raw, got, again, ok)
		}
	})
}
