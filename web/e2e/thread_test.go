package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/store"
)

// longReplyModel streams a reply of many paragraphs, one every few
// milliseconds, so that it grows well past the window while the page watches.
type longReplyModel struct{ paragraphs int }

func (longReplyModel) Name() string  { return "long" }
func (longReplyModel) Model() string { return "long-1" }

func (m longReplyModel) Stream(ctx context.Context, req agent.Request, emit func(agent.Delta) error) (*agent.Reply, error) {
	var sent strings.Builder
	for i := range m.paragraphs {
		d := fmt.Sprintf("Paragraph %d of a long answer about rate limits and token buckets.\n\n", i+1)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(15 * time.Millisecond):
		}
		if err := emit(agent.Delta{Text: d}); err != nil {
			return nil, err
		}
		sent.WriteString(d)
	}
	return &agent.Reply{Parts: []agent.Part{agent.TextPart{Text: sent.String()}}, StopReason: agent.StopEnd, Model: "long-1"}, nil
}

// seedReplies writes n exchanges to a new thread; each reply is long
// enough that a few of them fill the window.
func seedReplies(t *testing.T, db *store.DB, n int, reply string) (*store.Thread, []*store.Message) {
	t.Helper()
	ctx := context.Background()
	th, err := db.CreateThread(ctx, store.ThreadCreate{Title: "Rate limits"})
	if err != nil {
		t.Fatal(err)
	}
	var replies []*store.Message
	for i := range n {
		u, err := db.CreateMessage(ctx, store.MessageCreate{ThreadID: th.ID, Role: store.RoleUser, Content: fmt.Sprintf("Question %d?", i+1)})
		if err != nil {
			t.Fatal(err)
		}
		m, err := db.CreateMessage(ctx, store.MessageCreate{ThreadID: th.ID, Role: store.RoleAssistant, Content: reply, ReplyTo: u.ID})
		if err != nil {
			t.Fatal(err)
		}
		replies = append(replies, m)
	}
	return th, replies
}

const digest = "**Offline digest** (no model configured)\n\nI pick out what the conversation says with simple rules.\n\n" +
	"**Sounds decided**\n- Limit each API key with a token bucket in Redis\n\n**Open questions**\n- Per plan or per key?"

// TestPinEditor pins a reply through the inline editor: Pin offers the
// reply's first meaningful sentence, Escape cancels; selecting text offers
// "Pin as decision", and Enter pins exactly the selection.
func TestPinEditor(t *testing.T) {
	ts, db := newServerWith(t, longReplyModel{})
	th, replies := seedReplies(t, db, 1, digest)
	b := newBrowser(t)
	msg := "#msg-" + replies[0].ID

	var offered, afterEscape, selection string
	var editors, pinned int
	err := runSteps(t, b,
		signIn(ts.URL, ownerEmail, ownerPassword),
		chromedp.Navigate(ts.URL+"/t/"+th.ID),
		chromedp.WaitVisible(msg+` [data-testid="pin"]`, chromedp.ByQuery),
		chromedp.Click(msg+` [data-testid="pin"]`, chromedp.ByQuery),
		chromedp.WaitVisible(msg+` [data-testid="pin-editor-input"]`, chromedp.ByQuery),
		chromedp.Value(msg+` [data-testid="pin-editor-input"]`, &offered, chromedp.ByQuery),
		chromedp.KeyEvent("\x1b"),
		chromedp.WaitNotPresent(msg+` [data-testid="pin-editor"]`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("`+msg+`").classList.contains("pinned") ? "pinned" : "not pinned"`, &afterEscape),
		// Select the words "token bucket in Redis" inside the reply.
		chromedp.Evaluate(`(() => {
  const li = document.querySelector("`+msg+` .body li");
  const text = li.firstChild;
  const start = text.data.indexOf("token bucket");
  const r = document.createRange();
  r.setStart(text, start);
  r.setEnd(text, start + "token bucket in Redis".length);
  const sel = getSelection();
  sel.removeAllRanges();
  sel.addRange(r);
  return sel.toString();
})()`, &selection),
		chromedp.WaitVisible(`[data-testid="pin-selection"]`, chromedp.ByQuery),
		chromedp.Click(`[data-testid="pin-selection"]`, chromedp.ByQuery),
		chromedp.WaitVisible(msg+` [data-testid="pin-editor-input"]`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('[data-testid="pin-editor"]').length`, &editors),
		chromedp.Value(msg+` [data-testid="pin-editor-input"]`, &offered, chromedp.ByQuery),
		pressEnter(),
		chromedp.WaitVisible(msg+` [data-testid="unpin"]`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("#pin-count").textContent.trim() === "1" ? 1 : 0`, &pinned),
	)
	if err != nil {
		t.Fatalf("browser: %v (page problems: %v)", err, b.problems())
	}
	if afterEscape != "not pinned" {
		t.Errorf("after Escape the reply is %s, want not pinned", afterEscape)
	}
	if selection != "token bucket in Redis" || offered != selection {
		t.Errorf("editor offered %q for the selection %q, want the selection", offered, selection)
	}
	if editors != 1 {
		t.Errorf("%d pin editors open, want 1", editors)
	}
	if pinned != 1 {
		t.Errorf("pin count not updated to 1")
	}
	h, err := db.FindHandoffByThread(context.Background(), th.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Decisions) != 1 || h.Decisions[0].Content != "token bucket in Redis" {
		t.Fatalf("decisions=%+v, want one: the selected text", h.Decisions)
	}
	if p := b.problems(); len(p) > 0 {
		t.Errorf("page problems: %v", p)
	}
}

// TestPinEditorOffersFirstSentence checks what Pin offers with nothing
// selected: the reply's first meaningful sentence, without markdown.
func TestPinEditorOffersFirstSentence(t *testing.T) {
	ts, db := newServerWith(t, longReplyModel{})
	th, replies := seedReplies(t, db, 1, digest)
	b := newBrowser(t)
	msg := "#msg-" + replies[0].ID
	var offered string
	err := runSteps(t, b,
		signIn(ts.URL, ownerEmail, ownerPassword),
		chromedp.Navigate(ts.URL+"/t/"+th.ID),
		chromedp.WaitVisible(msg+` [data-testid="pin"]`, chromedp.ByQuery),
		chromedp.Click(msg+` [data-testid="pin"]`, chromedp.ByQuery),
		chromedp.WaitVisible(msg+` [data-testid="pin-editor-input"]`, chromedp.ByQuery),
		chromedp.Value(msg+` [data-testid="pin-editor-input"]`, &offered, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatalf("browser: %v (page problems: %v)", err, b.problems())
	}
	if offered != "Limit each API key with a token bucket in Redis" {
		t.Errorf("editor offered %q, want the first decided line as plain text", offered)
	}
}

// TestChatFollowsStream sends from the end of a long thread: the reply
// stays in view above the composer while it streams. Scrolling up stops
// following and shows "Jump to latest", which brings the reader back.
func TestChatFollowsStream(t *testing.T) {
	ts, db := newServerWith(t, longReplyModel{paragraphs: 80})
	th, _ := seedReplies(t, db, 4, strings.Repeat("A long earlier answer line.\n\n", 20))
	b := newBrowser(t)

	// The gap between the streaming text's end and the composer's top:
	// negative means the text is hidden behind the composer or below.
	const gap = `(() => {
  const s = document.querySelector('[data-testid="stream"]') || document.querySelector("#messages article:last-of-type .body");
  return Math.round(document.querySelector("#composer").getBoundingClientRect().top - s.getBoundingClientRect().bottom);
})()`
	var gapMid, gapEnd, scrolledAt, scrollAfter int
	var jumpHiddenFollowing, jumpShown, jumpHiddenAfter bool
	err := runSteps(t, b,
		signIn(ts.URL, ownerEmail, ownerPassword),
		chromedp.Navigate(ts.URL+"/t/"+th.ID),
		chromedp.WaitVisible(`#content`, chromedp.ByQuery),
		chromedp.SendKeys(`#content`, "Tell me everything.", chromedp.ByQuery),
		pressEnter(),
		chromedp.WaitVisible(`[data-testid="stream"]`, chromedp.ByQuery),
		chromedp.Poll(`(document.querySelector('[data-testid="stream"]')||{textContent:""}).textContent.includes("Paragraph 30 ")`, nil),
		chromedp.Evaluate(gap, &gapMid),
		chromedp.Evaluate(`document.getElementById("jump-latest").hidden`, &jumpHiddenFollowing),
		// The reader scrolls up: following stops, the control appears.
		chromedp.Evaluate(`window.scrollBy(0, -600); Math.round(window.scrollY)`, &scrolledAt),
		chromedp.Poll(`!document.getElementById("jump-latest").hidden`, &jumpShown),
		chromedp.WaitVisible(`article[data-testid="msg-assistant"]:last-of-type [data-testid="usage"]`, chromedp.ByQuery),
		chromedp.Evaluate(`Math.round(window.scrollY)`, &scrollAfter),
		chromedp.Click(`#jump-latest`, chromedp.ByQuery),
		chromedp.Poll(`document.getElementById("jump-latest").hidden`, &jumpHiddenAfter),
		chromedp.Evaluate(gap, &gapEnd),
	)
	if err != nil {
		t.Fatalf("browser: %v (page problems: %v)", err, b.problems())
	}
	if gapMid < 0 {
		t.Errorf("while streaming, the reply's end is %d px behind the composer, want it in view", -gapMid)
	}
	if !jumpHiddenFollowing {
		t.Errorf("Jump to latest shown while following the stream")
	}
	if scrollAfter > scrolledAt+5 {
		t.Errorf("scrolled from %d to %d after the reader scrolled up, want the page to stay", scrolledAt, scrollAfter)
	}
	if gapEnd < 0 {
		t.Errorf("after Jump to latest the reply's end is %d px behind the composer", -gapEnd)
	}
	if p := b.problems(); len(p) > 0 {
		t.Errorf("page problems: %v", p)
	}
}

// TestSendErrorByComposer checks that a refused send says why next to the
// composer and keeps the draft, and that sending twice leaves the console
// free of htmx errors (#no-messages is gone after the first).
func TestSendErrorByComposer(t *testing.T) {
	ts, db := newServer(t)
	th, err := db.CreateThread(context.Background(), store.ThreadCreate{Title: "errors"})
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t)
	var composerErr, flash string
	var draftLen, sent int
	err = runSteps(t, b,
		signIn(ts.URL, ownerEmail, ownerPassword),
		chromedp.Navigate(ts.URL+"/t/"+th.ID),
		chromedp.WaitVisible(`#content`, chromedp.ByQuery),
		chromedp.SendKeys(`#content`, "First idea: CSV export.", chromedp.ByQuery),
		pressEnter(),
		chromedp.WaitVisible(`article[data-testid="msg-assistant"]`, chromedp.ByQuery),
		chromedp.Poll(`!document.querySelector("#content").disabled`, nil),
		chromedp.SendKeys(`#content`, "Second: also JSON.", chromedp.ByQuery),
		pressEnter(),
		chromedp.Poll(`document.querySelectorAll('article[data-testid="msg-assistant"]').length === 2`, nil),
		chromedp.Poll(`!document.querySelector("#content").disabled`, nil),
		chromedp.ActionFunc(func(context.Context) error {
			if p := b.problems(); len(p) > 0 {
				return fmt.Errorf("page problems after two sends (htmx errors included): %v", p)
			}
			return nil
		}),
		// Too long a message: the server refuses it (422).
		chromedp.Evaluate(`document.querySelector("#content").value = "x".repeat(40000); true`, nil),
		chromedp.Focus(`#content`, chromedp.ByQuery),
		pressEnter(),
		chromedp.Poll(`document.querySelector('[data-testid="composer-error"]').textContent.trim() !== ""`, nil),
		chromedp.Text(`[data-testid="composer-error"]`, &composerErr, chromedp.ByQuery),
		chromedp.Evaluate(`document.getElementById("flash").textContent.trim()`, &flash),
		chromedp.Evaluate(`document.querySelector("#content").value.length`, &draftLen),
		chromedp.Evaluate(`document.querySelectorAll('[data-testid="msg-user"]').length`, &sent),
	)
	if err != nil {
		t.Fatalf("browser: %v (page problems: %v)", err, b.problems())
	}
	if !strings.Contains(composerErr, "KiB") {
		t.Errorf("composer error=%q, want the size limit explained", composerErr)
	}
	if flash != "" {
		t.Errorf("flash at the top=%q, want the error by the composer only", flash)
	}
	if draftLen != 40000 {
		t.Errorf("draft is %d characters after the failed send, want all 40000 kept", draftLen)
	}
	if sent != 2 {
		t.Errorf("%d user messages, want 2", sent)
	}
}

// TestReviewLabelsAfterRemoveAndAdd removes the first decision and adds
// one: the labels are D1, D2, D3 again without a reload, not two D3s.
func TestReviewLabelsAfterRemoveAndAdd(t *testing.T) {
	ts, db := newServer(t)
	ctx := context.Background()
	th, err := db.CreateThread(ctx, store.ThreadCreate{Title: "Labels"})
	if err != nil {
		t.Fatal(err)
	}
	h, err := db.EnsureHandoff(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"Use Postgres", "Use goose", "Use pgx"} {
		if _, _, err := db.CreateDecision(ctx, h.ID, store.DecisionCreate{Content: c}, 0); err != nil {
			t.Fatal(err)
		}
	}
	b := newBrowser(t)
	var labels string
	err = runSteps(t, b,
		signIn(ts.URL, ownerEmail, ownerPassword),
		chromedp.Navigate(ts.URL+"/h/"+h.ID),
		chromedp.WaitVisible(`[data-testid="decision"]`, chromedp.ByQuery),
		chromedp.Click(`[data-testid="decision"] [data-testid="remove"]`, chromedp.ByQuery),
		chromedp.Poll(`document.querySelectorAll('[data-testid="decision"]').length === 2`, nil),
		chromedp.SendKeys(`[data-testid="add-decision-input"]`, "Deploy on Fridays never", chromedp.ByQuery),
		chromedp.Click(`[data-testid="add-decision"]`, chromedp.ByQuery),
		chromedp.Poll(`document.querySelectorAll('[data-testid="decision"]').length === 3`, nil),
		chromedp.Poll(`[...document.querySelectorAll('[data-testid="decision"] [data-testid="label"]')].map(e => e.textContent).join(",") === "D1,D2,D3"`, nil),
		chromedp.Evaluate(`[...document.querySelectorAll('[data-testid="decision"] [data-testid="label"]')].map(e => e.textContent).join(",")`, &labels),
	)
	if err != nil {
		// What the page shows now, to tell a stale label from a missing item.
		var state string
		chromedp.Run(b.ctx, chromedp.Evaluate(`[...document.querySelectorAll('#decisions > li')].map(e => e.id.slice(-4) + ":" +
			(e.querySelector('[data-testid="label"]') || {}).textContent).join(",") + " live=" + document.body.getAttribute("data-live-applied")`, &state))
		t.Fatalf("browser: %v (labels %q, page now %s, page problems: %v)", err, labels, state, b.problems())
	}
	if p := b.problems(); len(p) > 0 {
		t.Errorf("page problems: %v", p)
	}
}
