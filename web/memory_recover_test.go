package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/agent/offline"
	"github.com/baton-dev/baton/store/storetest"
)

// TestRecoverMemory checks that a snapshot frozen without being captured
// (a crash between the two) is captured when the server starts.
func TestRecoverMemory(t *testing.T) {
	ctx := context.Background()
	app := newApp(t, offline.New())
	storetest.FrozenSnapshot(t, app.DB, storetest.Items{Decisions: storetest.Decisions("Keep sessions in Redis.")})
	if _, body := app.get("/api/v1/decisions"); strings.Contains(body, "Redis") {
		t.Fatal("the decision is in memory before recovery; the test proves nothing")
	}

	app.Srv.RecoverMemory(ctx)
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, body := app.get("/api/v1/decisions")
		if strings.Contains(body, "Keep sessions in Redis.") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("decision not captured after recovery: %s", body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if left, err := app.DB.FindUncapturedSnapshots(ctx, 10); err != nil || len(left) != 0 {
		t.Fatalf("uncaptured snapshots after recovery: %d (err %v), want 0", len(left), err)
	}
}
