package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/store/storetest"
)

// TestStoredTextRule checks the one rule for stored text: titles,
// messages and items refuse C0 controls but tab and newline, and the bidi
// overrides and isolates; a model's reply has them removed instead.
func TestStoredTextRule(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t)
	th, err := db.CreateThread(ctx, store.ThreadCreate{Title: "Fine"})
	if err != nil {
		t.Fatal(err)
	}
	bad := []string{"a\x00b", "a\x1bb", "a\x07b", "a\u202eb", "a\u202ab", "a\u2066b", "a\u2069b", "a\x7fb"}
	for _, s := range bad {
		if _, err := db.CreateThread(ctx, store.ThreadCreate{Title: s}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("title %q: err=%v, want ErrInvalid", s, err)
		}
		if _, err := db.CreateMessage(ctx, store.MessageCreate{ThreadID: th.ID, Role: store.RoleUser, Content: s}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("message %q: err=%v, want ErrInvalid", s, err)
		}
		d := store.Decision{Content: s, Source: store.SourcePinned}
		if err := d.Validate(); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("decision %q: err=%v, want ErrInvalid", s, err)
		}
	}
	m, err := db.CreateMessage(ctx, store.MessageCreate{ThreadID: th.ID, Role: store.RoleUser, Content: "one\r\ntwo\tthree\rfour"})
	if err != nil || m.Content != "one\ntwo\tthree\nfour" {
		t.Fatalf("message with CRLF, tab: %q, %v; want kept with \\n line ends", m.Content, err)
	}
	r, err := db.CreateMessage(ctx, store.MessageCreate{ThreadID: th.ID, Role: store.RoleAssistant, ReplyTo: m.ID, Content: "ok\x1b[31m \u202eyes\nno"})
	if err != nil || r.Content != "ok[31m yes\nno" {
		t.Fatalf("reply=%q, %v; want controls and overrides removed", r.Content, err)
	}
}
