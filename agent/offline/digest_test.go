package offline

import (
	"context"
	"strings"
	"testing"

	"github.com/baton-dev/baton/agent"
)

// TestOwnDigestsAreSkipped checks that the offline partner's earlier
// digests are not read as the team's words: without the rule, a digest's
// "Correct me where I'm wrong" becomes a risk and every item counts twice.
func TestOwnDigestsAreSkipped(t *testing.T) {
	first := []agent.TranscriptMessage{{Role: agent.RoleUser,
		Content: "Let's go with Postgres for storage. I'm worried about migration downtime in `db/migrate.go`."}}
	digest, err := New().Stream(context.Background(), agent.Request{Messages: []agent.Message{agent.Text(agent.RoleUser, first[0].Content)}},
		func(agent.Delta) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	withDigest := append(first, agent.TranscriptMessage{Role: agent.RoleAssistant, Content: digest.Text()})

	got, _ := New().Extract(context.Background(), withDigest)
	want, _ := New().Extract(context.Background(), first)
	if len(got.Decisions) != len(want.Decisions) || len(got.Risks) != len(want.Risks) || len(got.FilesReferenced) != len(want.FilesReferenced) {
		t.Fatalf("with the digest: %d decisions, %d risks, %d files; without: %d, %d, %d",
			len(got.Decisions), len(got.Risks), len(got.FilesReferenced), len(want.Decisions), len(want.Risks), len(want.FilesReferenced))
	}
	for _, r := range got.Risks {
		if strings.Contains(strings.ToLower(r.Description), "correct me") {
			t.Fatalf("risk %q comes from the digest itself", r.Description)
		}
	}
}
