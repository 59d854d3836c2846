// Package e2e drives Baton in a real browser (Debian's chromium through
// chromedp) for what only a browser shows: streaming swaps, keyboard
// handling, reloads and the CSP.
package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/agent/offline"
	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
	"github.com/baton-dev/baton/web"
)

// browser is a headless chromium tab with the page's console problems
// (CSP violations, uncaught errors) collected.
type browser struct {
	ctx context.Context
	mu  sync.Mutex
	bad []string
}

func (b *browser) problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.bad...)
}

// newBrowser starts chromium. Without it the test fails in CI (CI=true)
// and is skipped elsewhere with a note on how to install it.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	path := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium not found; .ci/run installs it (apt-get install -y chromium)")
		}
		t.Skip("chromium not found: apt-get install -y chromium to run the browser tests")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1100, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() { cancelTime(); cancelTab(); cancelAlloc() })

	b := &browser{ctx: ctx}
	chromedp.ListenTarget(ctx, func(ev any) {
		var msg string
		switch e := ev.(type) {
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.LevelError || strings.Contains(e.Entry.Text, "Content Security Policy") {
				msg = "log: " + e.Entry.Text
			}
		case *runtime.EventExceptionThrown:
			msg = "exception: " + e.ExceptionDetails.Error()
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError {
				msg = "console.error"
				for _, a := range e.Args {
					msg += " " + string(a.Value)
				}
			}
		}
		if msg != "" {
			b.mu.Lock()
			b.bad = append(b.bad, msg)
			b.mu.Unlock()
		}
	})
	// Violations are also collected in the page, which sees every one.
	err := chromedp.Run(ctx, cdplog.Enable(), runtime.Enable(), chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := page.AddScriptToEvaluateOnNewDocument(`window.__csp = [];
document.addEventListener("securitypolicyviolation", e => window.__csp.push(e.violatedDirective + " " + e.blockedURI));`).Do(ctx)
		return err
	}))
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return b
}

// slowProvider paces the offline provider's deltas so that streaming is
// visible to the page the way a real model's is. With a hold channel, every
// reply stops after its first delta until hold is closed, so a test can look
// at the page mid-stream however slow the machine is.
type slowProvider struct {
	agent.Provider
	hold <-chan struct{}
}

func (p slowProvider) Stream(ctx context.Context, req agent.Request, emit func(agent.Delta) error) (*agent.Reply, error) {
	first := true
	return p.Provider.Stream(ctx, req, func(d agent.Delta) error {
		if !first && p.hold != nil {
			select {
			case <-p.hold:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		first = false
		time.Sleep(5 * time.Millisecond)
		return emit(d)
	})
}

func newServer(t *testing.T) (*httptest.Server, *store.DB) {
	t.Helper()
	return newServerWith(t, slowProvider{Provider: offline.New()})
}

// newServerWith starts Baton with p as the model, set up with Ana as the
// owner (sign the browser in with signIn).
func newServerWith(t *testing.T, p agent.Provider) (*httptest.Server, *store.DB) {
	t.Helper()
	ts, db := newBareServer(t, p)
	if _, err := db.SetUp(context.Background(), store.Setup{
		Owner: store.UserCreate{Email: ownerEmail, Name: "Ana", Password: ownerPassword}, Workspace: "Acme"}); err != nil {
		t.Fatal(err)
	}
	return ts, db
}

// newBareServer starts Baton with p as the model, not set up yet.
func newBareServer(t *testing.T, p agent.Provider) (*httptest.Server, *store.DB) {
	t.Helper()
	db := storetest.MustOpen(t)
	srv := web.New(web.Config{DB: db, Provider: p, Extractor: offline.New(),
		Logger: slog.New(slog.DiscardHandler), SessionKey: []byte("0123456789abcdef0123456789abcdef")})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts, db
}

const (
	ownerEmail    = "ana@example.com"
	ownerPassword = "correct horse battery"
)

// signIn signs the browser in at base's /login as email.
func signIn(base, email, password string) chromedp.Action {
	return chromedp.Tasks{
		chromedp.Navigate(base + "/login"),
		chromedp.WaitVisible(`[data-testid="login-form"]`, chromedp.ByQuery),
		chromedp.SendKeys(`#email`, email, chromedp.ByQuery),
		chromedp.SendKeys(`#password`, password, chromedp.ByQuery),
		chromedp.Click(`[data-testid="login-submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-testid="user-name"]`, chromedp.ByQuery),
	}
}

// TestChatStreamsAndPersists opens Baton, starts a brainstorm, sends a
// message with Enter, watches the reply stream in, reloads and finds both
// messages, with no CSP violation on the way.
func TestChatStreamsAndPersists(t *testing.T) {
	hold := make(chan struct{})
	ts, _ := newServerWith(t, slowProvider{Provider: offline.New(), hold: hold})
	b := newBrowser(t)

	const countSwaps = `(() => {
  window.__swaps = 0;
  new MutationObserver(records => {
    for (const r of records) {
      const el = r.target.nodeType === 1 ? r.target : r.target.parentElement;
      if (el && el.closest('[data-testid="stream"]')) window.__swaps++;
    }
  }).observe(document.getElementById("messages"), {childList: true, subtree: true, characterData: true});
  return true;
})()`
	var ok bool
	var swaps, users, assistants int
	var csp []string
	var streamedText, composerValue string
	var disabledWhileStreaming bool
	err := chromedp.Run(b.ctx,
		signIn(ts.URL, ownerEmail, ownerPassword),
		chromedp.Navigate(ts.URL+"/"),
		chromedp.SendKeys(`#title`, "Billing export", chromedp.ByQuery),
		chromedp.Click(`[data-testid="new-brainstorm"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#composer textarea`, chromedp.ByQuery),
		chromedp.Evaluate(countSwaps, &ok),
		chromedp.SendKeys(`#content`, "Let's go with CSV first, written by `billing/export.go`.", chromedp.ByQuery),
		pressEnter(),
		chromedp.WaitVisible(`[data-testid="pending-reply"]`, chromedp.ByQuery),
		// app.js disables the composer once the pending reply is in; the
		// reply is held after its first delta, so this must come true.
		chromedp.Poll(`document.querySelector("#content").disabled`, &disabledWhileStreaming,
			chromedp.WithPollingTimeout(5*time.Second)),
		chromedp.ActionFunc(func(context.Context) error { close(hold); return nil }),
		chromedp.WaitVisible(`article[data-testid="msg-assistant"]`, chromedp.ByQuery),
		chromedp.Evaluate(`window.__swaps`, &swaps),
		chromedp.Text(`article[data-testid="msg-assistant"] .body`, &streamedText, chromedp.ByQuery),
		chromedp.Value(`#content`, &composerValue, chromedp.ByQuery),
		chromedp.Reload(),
		chromedp.WaitVisible(`article[data-testid="msg-assistant"]`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('[data-testid="msg-user"]').length`, &users),
		chromedp.Evaluate(`document.querySelectorAll('article[data-testid="msg-assistant"]').length`, &assistants),
		chromedp.Evaluate(`window.__csp`, &csp),
	)
	if err != nil {
		t.Fatalf("browser: %v (page problems: %v)", err, b.problems())
	}
	if swaps < 2 {
		t.Errorf("swaps=%d while streaming, want at least 2", swaps)
	}
	if !disabledWhileStreaming {
		t.Errorf("composer enabled while the reply streamed, want disabled")
	}
	if !strings.Contains(streamedText, "Offline digest") {
		t.Errorf("reply text=%q, want the offline digest", streamedText)
	}
	if composerValue != "" {
		t.Errorf("composer=%q after sending, want it emptied", composerValue)
	}
	if users != 1 || assistants != 1 {
		t.Errorf("after reload: %d user and %d assistant messages, want 1 and 1", users, assistants)
	}
	if len(csp) > 0 {
		t.Errorf("CSP violations: %v", csp)
	}
	if p := b.problems(); len(p) > 0 {
		t.Errorf("page problems: %v", p)
	}
}

// TestShiftEnterAddsNewline checks that Shift+Enter does not send.
func TestShiftEnterAddsNewline(t *testing.T) {
	ts, db := newServer(t)
	th, err := db.CreateThread(context.Background(), store.ThreadCreate{Title: "keys"})
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t)
	var value string
	var pending int
	err = chromedp.Run(b.ctx,
		signIn(ts.URL, ownerEmail, ownerPassword),
		chromedp.Navigate(fmt.Sprintf("%s/t/%s", ts.URL, th.ID)),
		chromedp.WaitVisible(`#content`, chromedp.ByQuery),
		chromedp.Focus(`#content`, chromedp.ByQuery),
		chromedp.KeyEvent("line one"),
		chromedp.KeyEvent("\r", chromedp.KeyModifiers(input.ModifierShift)),
		chromedp.KeyEvent("line two"),
		chromedp.Sleep(200*time.Millisecond),
		chromedp.Value(`#content`, &value, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('[data-testid="msg-user"]').length`, &pending),
	)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	if value != "line one\nline two" {
		t.Errorf("composer=%q, want two lines", value)
	}
	if pending != 0 {
		t.Errorf("%d messages sent by Shift+Enter, want 0", pending)
	}
}

// pressEnter sends the keydown of Enter alone. chromedp.KeyEvent("\r")
// also sends a separate "char" event, which a real browser does not deliver
// once the keydown was handled (preventDefault), so it would type a newline
// into whatever has focus next.
func pressEnter() chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		return input.DispatchKeyEvent(input.KeyRawDown).WithKey("Enter").WithCode("Enter").
			WithWindowsVirtualKeyCode(13).WithNativeVirtualKeyCode(13).Do(ctx)
	})
}
