package store_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/baton-dev/baton/store"
)

func TestErrorIs(t *testing.T) {
	sentinels := map[string]error{
		store.ECONFLICT:     store.ErrConflict,
		store.EFORBIDDEN:    store.ErrForbidden,
		store.EINTERNAL:     store.ErrInternal,
		store.EINVALID:      store.ErrInvalid,
		store.ENOTFOUND:     store.ErrNotFound,
		store.ERATELIMITED:  store.ErrRateLimited,
		store.EUNAUTHORIZED: store.ErrUnauthorized,
	}
	for code, sentinel := range sentinels {
		t.Run(code, func(t *testing.T) {
			err := fmt.Errorf("doing something: %w", store.Errorf(code, "It went wrong with %s.", "x"))
			for other, s := range sentinels {
				if got, want := errors.Is(err, s), other == code; got != want {
					t.Fatalf("errors.Is(%s error, sentinel of %s)=%v, want %v", code, other, got, want)
				}
			}
			if got := store.ErrorCode(err); got != code {
				t.Fatalf("ErrorCode=%q, want %q", got, code)
			}
			if got, want := store.ErrorMessage(err), "It went wrong with x."; got != want {
				t.Fatalf("ErrorMessage=%q, want %q", got, want)
			}
			// A wrapped sentinel has its code and its generic message.
			wrapped := fmt.Errorf("thread 7: %w", sentinel)
			if store.ErrorCode(wrapped) != code || store.ErrorMessage(wrapped) == "" || !errors.Is(wrapped, sentinel) {
				t.Fatalf("wrapped sentinel: code %q, message %q, want %q and a message", store.ErrorCode(wrapped), store.ErrorMessage(wrapped), code)
			}
		})
	}
}

func TestErrorCodeAndMessageOfOtherErrors(t *testing.T) {
	if got := store.ErrorCode(nil); got != "" {
		t.Fatalf("ErrorCode(nil)=%q, want empty", got)
	}
	if got := store.ErrorMessage(nil); got != "" {
		t.Fatalf("ErrorMessage(nil)=%q, want empty", got)
	}
	// Another error is internal, and its text (which may hold details not
	// meant for people) is never the message.
	other := errors.New("disk I/O error at /var/lib/baton/baton.db")
	if got := store.ErrorCode(other); got != store.EINTERNAL {
		t.Fatalf("ErrorCode=%q, want %q", got, store.EINTERNAL)
	}
	if got := store.ErrorMessage(other); got != store.ErrInternal.Message {
		t.Fatalf("ErrorMessage=%q, want the generic %q", got, store.ErrInternal.Message)
	}
	if errors.Is(other, store.ErrInternal) {
		t.Fatal("errors.Is(plain error, ErrInternal)=true, want false")
	}
}
