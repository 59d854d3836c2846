package web_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/baton-dev/baton/agent"
	"github.com/baton-dev/baton/agent/offline"
	"github.com/baton-dev/baton/store"
)

// stepClock is a store clock that moves a minute per reading, so that
// ordering by time does not depend on how fast the test runs.
func stepClock() func() time.Time {
	var n atomic.Int64
	base := time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)
	return func() time.Time { return base.Add(time.Duration(n.Add(1)) * time.Minute) }
}

func TestHome(t *testing.T) {
	app := newApp(t, offline.New())

	res, body := app.get("/")
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("Status=%d, want %d", got, want)
	}
	doc := parseHTML(t, body)
	if n := len(findAll(doc, "ul", "data-testid", "threads")); n != 0 {
		t.Fatalf("empty workspace lists threads")
	}
	findOne(t, doc, "form", "data-testid", "new-thread")

	app.DB.SetClock(stepClock())
	first, second, third := app.createThread("First"), app.createThread("Second"), app.createThread("Third")

	titles := func() (titles, hrefs []string) {
		t.Helper()
		_, body := app.get("/")
		list := findOne(t, parseHTML(t, body), "ul", "data-testid", "threads")
		for _, a := range findAll(list, "a") {
			titles = append(titles, textOf(a))
			hrefs = append(hrefs, attr(a, "href"))
		}
		return titles, hrefs
	}
	gotTitles, gotHrefs := titles()
	if got, want := strings.Join(gotTitles, ","), "Third,Second,First"; got != want {
		t.Fatalf("threads=%s, want %s", got, want)
	}
	if got, want := strings.Join(gotHrefs, ","), "/t/"+third.ID+",/t/"+second.ID+",/t/"+first.ID; got != want {
		t.Fatalf("links=%s, want %s", got, want)
	}

	// A thread with a new message is the most recent.
	if _, err := app.DB.CreateMessage(context.Background(), store.MessageCreate{ThreadID: first.ID, Role: store.RoleUser, Content: "back to this"}); err != nil {
		t.Fatal(err)
	}
	gotTitles, _ = titles()
	if got, want := strings.Join(gotTitles, ","), "First,Third,Second"; got != want {
		t.Fatalf("after a message in First: threads=%s, want %s", got, want)
	}
}

func TestThreadShow(t *testing.T) {
	app := newApp(t, offline.New())
	app.DB.SetClock(stepClock())
	th := app.createThread("Ordering")
	ctx := context.Background()
	var want []string
	var lastUser string
	for i, content := range []string{"one", "two", "three", "four"} {
		role, replyTo := store.RoleUser, ""
		if i%2 == 1 {
			role, replyTo = store.RoleAssistant, lastUser
		}
		m, err := app.DB.CreateMessage(ctx, store.MessageCreate{ThreadID: th.ID, Role: role, Content: content, ReplyTo: replyTo})
		if err != nil {
			t.Fatal(err)
		}
		if role == store.RoleUser {
			lastUser = m.ID
		}
		want = append(want, "msg-"+m.ID+" "+string(role)+" "+content)
	}

	res, body := app.get("/t/" + th.ID)
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("Status=%d, want %d", got, want)
	}
	doc := parseHTML(t, body)
	if got, want := textOf(findOne(t, doc, "h1", "data-testid", "thread-title")), "Ordering"; got != want {
		t.Fatalf("title=%q, want %q", got, want)
	}
	section := byID(doc, "messages")
	if section == nil {
		t.Fatal("no #messages")
	}
	var got []string
	for _, a := range findAll(section, "article") {
		role := strings.TrimPrefix(attr(a, "data-testid"), "msg-")
		body := strings.TrimSpace(textOf(findAll(a, "div", "class", "body")[0]))
		got = append(got, attr(a, "id")+" "+role+" "+body)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("messages:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := len(findAll(doc, "", "data-testid", "pending-reply")); n != 0 {
		t.Fatalf("a thread whose last message has a reply shows %d pending replies", n)
	}
	findOne(t, doc, "form", "id", "composer", "action", "/t/"+th.ID+"/messages")

	// A last user message without a reply (the tab was closed while it was
	// sent) is shown with a live stream for its reply.
	user, err := app.DB.CreateMessage(ctx, store.MessageCreate{ThreadID: th.ID, Role: store.RoleUser, Content: "five"})
	if err != nil {
		t.Fatal(err)
	}
	_, body = app.get("/t/" + th.ID)
	doc = parseHTML(t, body)
	if byID(doc, "msg-"+user.ID) == nil {
		t.Fatal("the unanswered user message is not shown")
	}
	pending := findOne(t, doc, "article", "data-testid", "pending-reply")
	if got, want := attr(pending, "sse-connect"), "/t/"+th.ID+"/messages/"+user.ID+"/reply"; got != want {
		t.Fatalf("sse-connect=%q, want %q", got, want)
	}
}

func TestNotFound(t *testing.T) {
	app := newApp(t, offline.New())
	th := app.createThread("Exists")
	user, err := app.DB.CreateMessage(context.Background(), store.MessageCreate{ThreadID: th.ID, Role: store.RoleUser, Content: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
	}{
		{"unknown thread", "/t/0190d0a0-0000-7000-8000-000000000000"},
		{"unknown route", "/no/such/page"},
		{"message of another thread", "/t/" + app.createThread("Other").ID + "/messages/" + user.ID + "/reply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, body := app.get(tt.path)
			if got, want := res.StatusCode, http.StatusNotFound; got != want {
				t.Fatalf("Status=%d, want %d", got, want)
			}
			if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
				t.Fatalf("Content-Type=%q, want text/html", ct)
			}
			doc := parseHTML(t, body)
			msg := textOf(findOne(t, doc, "", "data-testid", "error-message"))
			if !strings.Contains(msg, "Not found") {
				t.Fatalf("error message=%q, want it to say not found", msg)
			}
			if len(findAll(byID(doc, "main"), "a", "href", "/")) == 0 {
				t.Fatal("the error page has no way back to /")
			}
		})
	}
}

func TestMessageCreateHTMX(t *testing.T) {
	model := newFakeModel("Sure.")
	app := newApp(t, model)
	th := app.createThread("htmx")

	res, body := app.postForm("/t/"+th.ID+"/messages", url.Values{"content": {"Use **Postgres**?"}}, htmxSameOrigin)
	if got, want := res.StatusCode, http.StatusCreated; got != want {
		t.Fatalf("Status=%d, want %d; body: %s", got, want, body)
	}
	msgs := app.messages(th.ID)
	if len(msgs) != 1 || msgs[0].Role != store.RoleUser || msgs[0].Content != "Use **Postgres**?" {
		t.Fatalf("stored %+v, want the user's message only", msgs)
	}
	user := msgs[0]
	doc := parseHTML(t, body)
	art := findOne(t, doc, "article", "data-testid", "msg-user")
	if got, want := attr(art, "id"), "msg-"+user.ID; got != want {
		t.Fatalf("user article id=%q, want %q", got, want)
	}
	findOne(t, art, "strong") // rendered as markdown
	if got := textOf(art); !strings.Contains(got, "Use Postgres?") {
		t.Fatalf("user article text=%q, want the message", got)
	}
	pending := findOne(t, doc, "article", "data-testid", "pending-reply")
	if got, want := attr(pending, "sse-connect"), "/t/"+th.ID+"/messages/"+user.ID+"/reply"; got != want {
		t.Fatalf("sse-connect=%q, want %q", got, want)
	}
	findOne(t, pending, "", "sse-swap", "delta")
	findOne(t, pending, "form", "action", "/t/"+th.ID+"/messages/"+user.ID+"/stop")
	// The reply streams when the browser connects, not before.
	if got := model.Calls(); got != 0 {
		t.Fatalf("model calls=%d before the stream was opened, want 0", got)
	}
}

// TestMessageSavedBeforeModelCall checks, in every flow that calls the
// model, that the user's message is in the database when the model is
// called: a failed or cancelled call must not lose what was typed.
func TestMessageSavedBeforeModelCall(t *testing.T) {
	tests := []struct {
		name string
		send func(app *testApp, threadID string)
	}{
		{"form post", func(app *testApp, threadID string) {
			res, _ := app.postForm("/t/"+threadID+"/messages", url.Values{"content": {"saved first"}}, sameOrigin)
			if got, want := res.StatusCode, http.StatusSeeOther; got != want {
				app.t.Fatalf("Status=%d, want %d", got, want)
			}
		}},
		{"htmx and stream", func(app *testApp, threadID string) {
			user := app.sendHTMX(threadID, "saved first")
			app.openStream(context.Background(), threadID, user.ID).all(app.t)
		}},
		{"api", func(app *testApp, threadID string) {
			res, _ := app.postJSON("/api/v1/threads/"+threadID+"/messages", `{"content":"saved first"}`)
			if got, want := res.StatusCode, http.StatusCreated; got != want {
				app.t.Fatalf("Status=%d, want %d", got, want)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := newFakeModel("ok")
			app := newApp(t, model)
			th := app.createThread("Order of writes")
			var mu sync.Mutex
			var stored []string
			model.OnStream = func(ctx context.Context, req agent.Request) {
				msgs, err := app.DB.FindMessages(context.Background(), store.MessageFilter{ThreadID: th.ID})
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					stored = append(stored, "error: "+err.Error())
					return
				}
				for _, m := range msgs {
					stored = append(stored, string(m.Role)+": "+m.Content)
				}
			}
			tt.send(app, th.ID)
			if got, want := model.Calls(), 1; got != want {
				t.Fatalf("model calls=%d, want %d", got, want)
			}
			mu.Lock()
			defer mu.Unlock()
			if got, want := strings.Join(stored, "|"), "user: saved first"; got != want {
				t.Fatalf("stored when the model was called: %q, want %q", got, want)
			}
		})
	}
}

func TestMessageCreateForm(t *testing.T) {
	app := newApp(t, newFakeModel("Two ", "options."))
	th := app.createThread("No JS")

	res, body := app.postForm("/t/"+th.ID+"/messages", url.Values{"content": {"What are the options?"}}, sameOrigin)
	if got, want := res.StatusCode, http.StatusSeeOther; got != want {
		t.Fatalf("Status=%d, want %d; body: %s", got, want, body)
	}
	if got, want := res.Header.Get("Location"), "/t/"+th.ID+"#messages-end"; got != want {
		t.Fatalf("Location=%q, want %q", got, want)
	}
	// The reply was written before the redirect.
	msgs := app.messages(th.ID)
	if len(msgs) != 2 {
		t.Fatalf("stored %d messages, want 2", len(msgs))
	}

	_, page := app.get("/t/" + th.ID)
	doc := parseHTML(t, page)
	user := findOne(t, doc, "article", "data-testid", "msg-user")
	reply := findOne(t, doc, "article", "data-testid", "msg-assistant")
	if got, want := attr(user, "id"), "msg-"+msgs[0].ID; got != want {
		t.Fatalf("user id=%q, want %q", got, want)
	}
	if got, want := attr(reply, "data-status"), "complete"; got != want {
		t.Fatalf("reply data-status=%q, want %q", got, want)
	}
	if got := textOf(reply); !strings.Contains(got, "Two options.") || !strings.Contains(got, "fake-1") {
		t.Fatalf("reply text=%q, want the reply and its model", got)
	}
	if n := len(findAll(doc, "", "data-testid", "pending-reply")); n != 0 {
		t.Fatalf("answered thread shows %d pending replies", n)
	}
}

func TestMessageCreateInvalid(t *testing.T) {
	tests := []struct {
		name    string
		content string
		htmx    bool
		// wantStatus for htmx; a plain form redirects back with a flash.
		wantStatus int
		wantMsg    string
	}{
		{"empty htmx", "", true, http.StatusUnprocessableEntity, "The message is empty"},
		{"whitespace htmx", " \n\t ", true, http.StatusUnprocessableEntity, "The message is empty"},
		{"too long htmx", strings.Repeat("a", 32<<10+1), true, http.StatusUnprocessableEntity, "the limit is 32 KiB"},
		{"empty form", "   ", false, http.StatusSeeOther, "The message is empty"},
		{"too long form", strings.Repeat("é", 17<<10), false, http.StatusSeeOther, "the limit is 32 KiB"},
		{"over the body limit", strings.Repeat("a", 2<<20), true, http.StatusRequestEntityTooLarge, "too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := newFakeModel("never")
			app := newApp(t, model)
			th := app.createThread("Validation")
			h := sameOrigin
			if tt.htmx {
				h = htmxSameOrigin
			}
			res, body := app.postForm("/t/"+th.ID+"/messages", url.Values{"content": {tt.content}}, h)
			if got, want := res.StatusCode, tt.wantStatus; got != want {
				t.Fatalf("Status=%d, want %d", got, want)
			}
			if n := len(app.messages(th.ID)); n != 0 {
				t.Fatalf("stored %d messages, want none", n)
			}
			if model.Calls() != 0 {
				t.Fatalf("the model was called for an invalid message")
			}
			if tt.htmx {
				if got, want := res.Header.Get("HX-Retarget"), "#flash"; got != want {
					t.Fatalf("HX-Retarget=%q, want %q", got, want)
				}
				msg := textOf(findOne(t, parseHTML(t, body), "", "data-testid", "error-message"))
				if !strings.Contains(msg, tt.wantMsg) {
					t.Fatalf("message=%q, want it to contain %q", msg, tt.wantMsg)
				}
				return
			}
			// Post/Redirect/Get: the thread page shows the message once.
			if got, want := res.Header.Get("Location"), "/t/"+th.ID; got != want {
				t.Fatalf("Location=%q, want %q", got, want)
			}
			_, page := app.get("/t/" + th.ID)
			if got := textOf(byID(parseHTML(t, page), "flash")); !strings.Contains(got, tt.wantMsg) {
				t.Fatalf("#flash=%q, want it to contain %q", got, tt.wantMsg)
			}
			_, page = app.get("/t/" + th.ID)
			if got := strings.TrimSpace(textOf(byID(parseHTML(t, page), "flash"))); got != "" {
				t.Fatalf("#flash=%q on the second view, want it empty", got)
			}
		})
	}
}

func TestReplyStream(t *testing.T) {
	model := newFakeModel("Hello", ", ", "<script>alert(1)</script>", " & bye")
	app := newApp(t, model)
	th := app.createThread("Streaming")
	user := app.sendHTMX(th.ID, "Stream please")

	stream := app.openStream(context.Background(), th.ID, user.ID)
	if got, want := stream.Res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("Status=%d, want %d", got, want)
	}
	if got, want := stream.Res.Header.Get("Content-Type"), "text/event-stream"; got != want {
		t.Fatalf("Content-Type=%q, want %q", got, want)
	}
	if got := stream.Res.Header.Get("Content-Encoding"); got != "" {
		t.Fatalf("Content-Encoding=%q: a compressed stream is buffered", got)
	}
	events := stream.all(t)
	var deltas []string
	for _, ev := range events[:len(events)-1] {
		if ev.Event != "delta" {
			t.Fatalf("event %q before done, want only deltas", ev.Event)
		}
		deltas = append(deltas, ev.Data)
	}
	wantDeltas := []string{"Hello", ", ", "&lt;script&gt;alert(1)&lt;/script&gt;", " &amp; bye"}
	if got, want := strings.Join(deltas, "|"), strings.Join(wantDeltas, "|"); got != want {
		t.Fatalf("deltas=%q, want %q", got, want)
	}

	reply, err := app.DB.FindReply(context.Background(), th.ID, user.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := reply.Content, "Hello, <script>alert(1)</script> & bye"; got != want {
		t.Fatalf("stored Content=%q, want %q", got, want)
	}
	checkDone := func(t *testing.T, ev sseEvent) {
		t.Helper()
		if ev.Event != "done" {
			t.Fatalf("last event=%q, want done", ev.Event)
		}
		doc := parseHTML(t, ev.Data)
		art := findOne(t, doc, "article", "id", "msg-"+reply.ID)
		if got, want := attr(art, "data-status"), "complete"; got != want {
			t.Fatalf("done data-status=%q, want %q", got, want)
		}
		if n := len(findAll(doc, "script")); n != 0 {
			t.Fatalf("done event has %d <script> elements", n)
		}
		if got := textOf(art); !strings.Contains(got, "<script>alert(1)</script>") {
			t.Fatalf("done text=%q, want the reply shown as text", got)
		}
	}
	checkDone(t, events[len(events)-1])

	// Reconnecting (htmx does) gets the stored reply, not a second one.
	again := app.openStream(context.Background(), th.ID, user.ID).all(t)
	if len(again) != 1 {
		t.Fatalf("second stream has %d events, want just done: %+v", len(again), again)
	}
	checkDone(t, again[0])
	if got, want := model.Calls(), 1; got != want {
		t.Fatalf("model calls=%d, want %d", got, want)
	}
	if got, want := len(app.messages(th.ID)), 2; got != want {
		t.Fatalf("stored %d messages, want %d", got, want)
	}
}

// TestReplyStreamDeltaEncoding checks that each delta arrives, as the
// browser's EventSource reads it, exactly as text to append: escaped for
// HTML, with every line kept.
func TestReplyStreamDeltaEncoding(t *testing.T) {
	tests := []struct {
		name  string
		delta string
		want  string
	}{
		{"plain", "Hello there", "Hello there"},
		{"html", `<img src=x onerror="alert(1)">&`, "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;&amp;"},
		{"newlines", "one\n\ntwo\n", "one\n\ntwo\n"},
		{"crlf", "one\r\ntwo", "one\ntwo"},
		{"lone cr", "one\rtwo", "one\ntwo"},
		{"field-like text", "event: done\ndata: x", "event: done\ndata: x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := newApp(t, newFakeModel(tt.delta))
			th := app.createThread("Encoding")
			user := app.sendHTMX(th.ID, "go")
			events := app.openStream(context.Background(), th.ID, user.ID).all(t)
			if len(events) != 2 || events[0].Event != "delta" || events[1].Event != "done" {
				t.Fatalf("events=%+v, want one delta and done", events)
			}
			if got := events[0].Data; got != tt.want {
				t.Fatalf("delta=%q, want %q", got, tt.want)
			}
		})
	}
}

func TestReplyStreamConcurrent(t *testing.T) {
	// Two tabs open the same reply: one model call, both get the reply.
	model := newFakeModel("one ", "reply")
	model.OnStream = func(context.Context, agent.Request) { time.Sleep(50 * time.Millisecond) }
	app := newApp(t, model)
	th := app.createThread("Two tabs")
	user := app.sendHTMX(th.ID, "hello")

	var wg sync.WaitGroup
	dones := make([]string, 2)
	for i := range dones {
		s := app.openStream(context.Background(), th.ID, user.ID)
		wg.Go(func() {
			for {
				ev, err := s.next()
				if err != nil {
					return
				}
				if ev.Event == "done" {
					dones[i] = ev.Data
				}
			}
		})
	}
	wg.Wait()
	if got, want := model.Calls(), 1; got != want {
		t.Fatalf("model calls=%d, want %d", got, want)
	}
	reply, err := app.DB.FindReply(context.Background(), th.ID, user.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range dones {
		if !strings.Contains(d, `id="msg-`+reply.ID+`"`) {
			t.Fatalf("stream %d done=%q, want the stored reply", i, d)
		}
	}
}

// TestReplyStreamLateViewer checks that a tab that opens a reply while it
// is being written gets the text so far, then follows it to the end.
func TestReplyStreamLateViewer(t *testing.T) {
	model := newFakeModel("so ", "far")
	model.Block = true
	app := newApp(t, model)
	th := app.createThread("Late tab")
	user := app.sendHTMX(th.ID, "Go on")

	first := app.openStream(context.Background(), th.ID, user.ID)
	for range 2 {
		if ev, err := first.next(); err != nil || ev.Event != "delta" {
			t.Fatalf("first tab: event=%+v, err=%v; want a delta", ev, err)
		}
	}
	late := app.openStream(context.Background(), th.ID, user.ID)
	var text string
	for range 2 {
		ev, err := late.next()
		if err != nil || ev.Event != "delta" {
			t.Fatalf("late tab: event=%+v, err=%v; want the deltas so far", ev, err)
		}
		text += ev.Data
	}
	if got, want := text, "so far"; got != want {
		t.Fatalf("late tab text=%q, want %q", got, want)
	}
	app.postForm("/t/"+th.ID+"/messages/"+user.ID+"/stop", nil, htmxSameOrigin)
	for name, s := range map[string]*sseStream{"first": first, "late": late} {
		if rest := s.all(t); len(rest) != 1 || rest[0].Event != "done" {
			t.Fatalf("%s tab after stop: %+v, want one done event", name, rest)
		}
	}
	if got, want := model.Calls(), 1; got != want {
		t.Fatalf("model calls=%d, want %d", got, want)
	}
}

// TestShutdownRefusesNewWork checks that once the server shuts down, a
// reply or an extraction is refused with 503 and nothing is written for it.
func TestShutdownRefusesNewWork(t *testing.T) {
	model := newFakeModel("never")
	app := newApp(t, model)
	th := app.createThread("Late")
	user := app.sendHTMX(th.ID, "Anyone there?")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := app.Srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}

	res, body := app.do(app.newRequest(http.MethodGet, "/t/"+th.ID+"/messages/"+user.ID+"/reply", nil,
		http.Header{"Accept": {"text/event-stream"}, "Sec-Fetch-Site": {"same-origin"}}))
	if got, want := res.StatusCode, http.StatusServiceUnavailable; got != want || !strings.Contains(body, "shutting down") {
		t.Fatalf("reply: Status=%d body=%q, want %d saying Baton is shutting down", got, body, want)
	}
	res, body = app.postForm("/t/"+th.ID+"/extract", nil, htmxSameOrigin)
	if got, want := res.StatusCode, http.StatusServiceUnavailable; got != want {
		t.Fatalf("extract: Status=%d, want %d; body: %s", got, want, body)
	}
	if got := model.Calls(); got != 0 {
		t.Fatalf("model calls=%d, want 0", got)
	}
	if _, err := app.DB.FindHandoffByThread(context.Background(), th.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("FindHandoffByThread err=%v, want no handoff written", err)
	}
}

func TestReplyStreamClientGone(t *testing.T) {
	model := newFakeModel("partial text")
	model.Block = true
	app := newApp(t, model)
	th := app.createThread("Closed tab")
	user := app.sendHTMX(th.ID, "Tell me everything")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := app.openStream(ctx, th.ID, user.ID)
	if ev, err := stream.next(); err != nil || ev.Event != "delta" {
		t.Fatalf("event=%+v, err=%v; want a delta", ev, err)
	}
	cancel()

	reply := app.waitForReply(th.ID, user.ID, time.Second)
	if got, want := reply.Status, store.StatusStopped; got != want {
		t.Fatalf("Status=%q, want %q", got, want)
	}
	if got, want := reply.Content, "partial text"; got != want {
		t.Fatalf("Content=%q, want %q", got, want)
	}
	if got, want := model.Calls(), 1; got != want {
		t.Fatalf("model calls=%d, want %d", got, want)
	}
}

func TestReplyStop(t *testing.T) {
	model := newFakeModel("so ", "far")
	model.Block = true
	app := newApp(t, model)
	th := app.createThread("Stop")
	user := app.sendHTMX(th.ID, "Go on and on")

	stream := app.openStream(context.Background(), th.ID, user.ID)
	for range 2 {
		if ev, err := stream.next(); err != nil || ev.Event != "delta" {
			t.Fatalf("event=%+v, err=%v; want a delta", ev, err)
		}
	}
	res, body := app.postForm("/t/"+th.ID+"/messages/"+user.ID+"/stop", nil, htmxSameOrigin)
	if got, want := res.StatusCode, http.StatusNoContent; got != want {
		t.Fatalf("stop: Status=%d, want %d; body: %s", got, want, body)
	}
	rest := stream.all(t)
	if len(rest) != 1 || rest[0].Event != "done" {
		t.Fatalf("after stop the stream sent %+v, want one done event", rest)
	}
	doc := parseHTML(t, rest[0].Data)
	art := findOne(t, doc, "article", "data-status", "stopped")
	findOne(t, art, "", "data-testid", "stopped")
	if got := textOf(art); !strings.Contains(got, "so far") {
		t.Fatalf("stopped reply text=%q, want what arrived", got)
	}
	reply, err := app.DB.FindReply(context.Background(), th.ID, user.ID)
	if err != nil {
		t.Fatal(err)
	}
	if reply.Status != store.StatusStopped || reply.Content != "so far" {
		t.Fatalf("stored %q %q, want stopped %q", reply.Status, reply.Content, "so far")
	}

	// Stopping when nothing runs is harmless; a plain form goes back to the thread.
	res, _ = app.postForm("/t/"+th.ID+"/messages/"+user.ID+"/stop", nil, sameOrigin)
	if got, want := res.StatusCode, http.StatusSeeOther; got != want {
		t.Fatalf("second stop: Status=%d, want %d", got, want)
	}
}

func TestReplyFailedAndRetry(t *testing.T) {
	const why = "The model rejected the API key (401). Set ANTHROPIC_API_KEY or switch BATON_PROVIDER=offline."
	model := newFakeModel("Half ", "a reply")
	model.Fail, model.FailCalls = &agent.Error{Provider: "fake", Kind: agent.ErrAuth, Status: 401, Message: why}, 1
	app := newApp(t, model)
	th := app.createThread("Failure")
	user := app.sendHTMX(th.ID, "Will this work?")

	// The stream ends with the failed reply, which says why and offers Retry.
	events := app.openStream(context.Background(), th.ID, user.ID).all(t)
	done := events[len(events)-1]
	if done.Event != "done" {
		t.Fatalf("last event=%q, want done", done.Event)
	}
	failed, err := app.DB.FindReply(context.Background(), th.ID, user.ID)
	if err != nil {
		t.Fatal(err)
	}
	if failed.Status != store.StatusFailed || failed.Error != why {
		t.Fatalf("stored Status=%q Error=%q, want failed with the provider's message", failed.Status, failed.Error)
	}
	retryURL := "/t/" + th.ID + "/messages/" + failed.ID + "/retry"
	checkFailed := func(t *testing.T, where, doc string) {
		t.Helper()
		art := findOne(t, parseHTML(t, doc), "article", "id", "msg-"+failed.ID)
		if got, want := attr(art, "data-status"), "failed"; got != want {
			t.Fatalf("%s: data-status=%q, want %q", where, got, want)
		}
		if got := textOf(findOne(t, art, "", "data-testid", "reply-error")); got != why {
			t.Fatalf("%s: reply-error=%q, want %q", where, got, why)
		}
		form := findOne(t, art, "form", "action", retryURL)
		findOne(t, form, "button", "data-testid", "retry")
	}
	checkFailed(t, "done event", done.Data)
	_, page := app.get("/t/" + th.ID)
	checkFailed(t, "page", page)

	// Retry with htmx: the failed reply is replaced by a pending one.
	res, body := app.postForm(retryURL, nil, htmxSameOrigin)
	if got, want := res.StatusCode, http.StatusOK; got != want {
		t.Fatalf("retry: Status=%d, want %d; body: %s", got, want, body)
	}
	pending := findOne(t, parseHTML(t, body), "article", "data-testid", "pending-reply")
	if got, want := attr(pending, "sse-connect"), "/t/"+th.ID+"/messages/"+user.ID+"/reply"; got != want {
		t.Fatalf("sse-connect=%q, want %q", got, want)
	}
	events = app.openStream(context.Background(), th.ID, user.ID).all(t)
	if got := events[len(events)-1].Data; !strings.Contains(got, `data-status="complete"`) {
		t.Fatalf("retried done=%s, want a complete reply", got)
	}

	msgs := app.messages(th.ID)
	var roles []string
	for _, m := range msgs {
		roles = append(roles, string(m.Role)+":"+string(m.Status))
	}
	if got, want := strings.Join(roles, ","), "user:complete,assistant:complete"; got != want {
		t.Fatalf("messages=%s, want %s", got, want)
	}
	if msgs[0].ID != user.ID || msgs[1].ReplyTo != user.ID || msgs[1].Content != "Half a reply" {
		t.Fatalf("messages=%+v %+v, want the same user message and one reply to it", msgs[0], msgs[1])
	}
	if _, err := app.DB.FindMessageByID(context.Background(), th.ID, failed.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("failed reply after retry: err=%v, want ErrNotFound", err)
	}
	if got, want := model.Calls(), 2; got != want {
		t.Fatalf("model calls=%d, want %d", got, want)
	}

	// Only failed replies can be retried.
	tests := []struct {
		name       string
		mid        string
		wantStatus int
	}{
		{"complete reply", msgs[1].ID, http.StatusConflict},
		{"user message", user.ID, http.StatusConflict},
		{"the deleted failed reply", failed.ID, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, body := app.postForm("/t/"+th.ID+"/messages/"+tt.mid+"/retry", nil, htmxSameOrigin)
			if got, want := res.StatusCode, tt.wantStatus; got != want {
				t.Fatalf("Status=%d, want %d", got, want)
			}
			if got, want := res.Header.Get("HX-Retarget"), "#flash"; got != want {
				t.Fatalf("HX-Retarget=%q, want %q", got, want)
			}
			findOne(t, parseHTML(t, body), "", "data-testid", "error-message")
			if got, want := len(app.messages(th.ID)), 2; got != want {
				t.Fatalf("stored %d messages, want %d", got, want)
			}
		})
	}
	if got, want := model.Calls(), 2; got != want {
		t.Fatalf("model calls=%d after refused retries, want %d", got, want)
	}
}

func TestReplyRetryForm(t *testing.T) {
	model := newFakeModel("fine now")
	model.Fail, model.FailCalls = &agent.Error{Kind: agent.ErrUnavailable, Message: "The model is overloaded. Press Retry in a minute."}, 1
	app := newApp(t, model)
	th := app.createThread("No JS retry")

	if res, _ := app.postForm("/t/"+th.ID+"/messages", url.Values{"content": {"try"}}, sameOrigin); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("send: Status=%d, want %d", res.StatusCode, http.StatusSeeOther)
	}
	msgs := app.messages(th.ID)
	if len(msgs) != 2 || msgs[1].Status != store.StatusFailed {
		t.Fatalf("after a failed call stored %+v, want the user's message and a failed reply", msgs)
	}
	res, _ := app.postForm("/t/"+th.ID+"/messages/"+msgs[1].ID+"/retry", nil, sameOrigin)
	if got, want := res.StatusCode, http.StatusSeeOther; got != want {
		t.Fatalf("retry: Status=%d, want %d", got, want)
	}
	after := app.messages(th.ID)
	if len(after) != 2 || after[0].ID != msgs[0].ID || after[1].Status != store.StatusComplete || after[1].Content != "fine now" {
		t.Fatalf("after retry stored %+v %+v, want the user's message and a complete reply", after[0], after[len(after)-1])
	}
}

func TestMarkdownSafety(t *testing.T) {
	tests := []struct {
		name    string
		content string
		check   func(t *testing.T, body *html.Node)
	}{
		{"script is text", "<script>alert(1)</script>", func(t *testing.T, b *html.Node) {
			if n := len(findAll(b, "script")); n != 0 {
				t.Fatalf("%d <script> elements in the message", n)
			}
			if got := textOf(b); !strings.Contains(got, "<script>alert(1)</script>") {
				t.Fatalf("text=%q, want the markup shown as text", got)
			}
		}},
		{"inline html is text", `hi <img src=x onerror="alert(1)"> there`, func(t *testing.T, b *html.Node) {
			if n := len(findAll(b, "img")); n != 0 {
				t.Fatalf("%d <img> elements in the message", n)
			}
			for _, el := range findAll(b, "") {
				if _, ok := attrOf(el, "onerror"); ok {
					t.Fatalf("an element has onerror: %s", render(el))
				}
			}
		}},
		{"image is a link", "![x](https://evil.example/x.png)", func(t *testing.T, b *html.Node) {
			if n := len(findAll(b, "img")); n != 0 {
				t.Fatalf("%d <img> elements in the message", n)
			}
			findOne(t, b, "a", "href", "https://evil.example/x.png")
		}},
		{"javascript link", "[click](javascript:alert(1))", func(t *testing.T, b *html.Node) {
			for _, a := range findAll(b, "a") {
				if strings.HasPrefix(strings.ToLower(attr(a, "href")), "javascript:") {
					t.Fatalf("javascript: link rendered: %s", render(a))
				}
			}
		}},
		{"gfm table", "| a | b |\n|---|---|\n| 1 | 2 |", func(t *testing.T, b *html.Node) {
			table := findOne(t, b, "table")
			if got, want := len(findAll(table, "td")), 2; got != want {
				t.Fatalf("%d cells, want %d", got, want)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The model repeats what it was told: both roles go through the
			// same rendering.
			app := newApp(t, newFakeModel(tt.content))
			th := app.createThread("Markdown")
			if res, body := app.postForm("/t/"+th.ID+"/messages", url.Values{"content": {tt.content}}, sameOrigin); res.StatusCode != http.StatusSeeOther {
				t.Fatalf("send: Status=%d, want %d; body: %s", res.StatusCode, http.StatusSeeOther, body)
			}
			_, page := app.get("/t/" + th.ID)
			doc := parseHTML(t, page)
			body := findOne(t, doc, "body")
			if n := len(findAll(body, "script")); n != 0 {
				t.Fatalf("page body has %d <script> elements", n)
			}
			for _, role := range []string{"user", "assistant"} {
				t.Run(role, func(t *testing.T) {
					art := findOne(t, doc, "article", "data-testid", "msg-"+role)
					tt.check(t, findAll(art, "div", "class", "body")[0])
				})
			}
		})
	}
}
