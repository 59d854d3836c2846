package web

import (
	"context"
	"fmt"
	"strings"

	"github.com/baton-dev/baton/store"
)

// planFileName is what a downloaded plan is called: the brainstorm's title
// as a slug, then the version ("jwt-migration-plan-v2.md"), so that the
// plans of several brainstorms and versions do not all arrive as plan-v1.md.
func planFileName(title string, version int) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		default:
			dash = true
		}
		if b.Len() >= 60 {
			break
		}
	}
	slug := strings.Trim(b.String(), "-")
	if slug == "" {
		return fmt.Sprintf("plan-v%d.md", version)
	}
	return fmt.Sprintf("%s-plan-v%d.md", slug, version)
}

// planDownloadName names a plan's download after its brainstorm (deleted
// or not) and version.
func (s *Server) planDownloadName(ctx context.Context, plan *store.Plan) string {
	title := ""
	if sn, err := s.db.FindSnapshotByID(ctx, plan.SnapshotID); err == nil {
		if t, err := s.db.FindThreadByIDIncludingDeleted(ctx, sn.Payload.ThreadID); err == nil {
			title = t.Title
		}
	}
	return planFileName(title, plan.Version)
}
