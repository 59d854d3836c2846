package web

import (
	"context"
	"fmt"

	"github.com/baton-dev/baton/store"
	"github.com/baton-dev/baton/views"
)

// This file is the one place that says who is asking and what they may do
// on review routes. Until accounts land, RequestState has no user: the
// caller is the local owner, named "You", and may do everything. Accounts
// fill RequestState (UserID, UserName, WorkspaceID, Role) and these
// functions follow.

// action is something a person does in team review.
type action int

const (
	actComment       action = iota // comment, reply, resolve, reopen: every member
	actReview                      // approve or request changes: every member
	actRequestReview               // ask members for review: editors and owners
	actShare                       // make and revoke share links: editors and owners
	actReplan                      // plan again with review comments: editors and owners
)

// Roles of issue 11's memberships.
const (
	roleOwner  = "owner"
	roleEditor = "editor"
	roleViewer = "viewer"
)

// can reports whether the request's caller may do a. Shared (read-only)
// views may do nothing here: guests comment through the share routes,
// which check the link's mode instead.
func can(ctx context.Context, a action) bool {
	st := views.RequestStateFrom(ctx)
	if st.ReadOnly && st.Role == "" {
		return false // a shared view: guests go through the share routes
	}
	switch st.Role {
	case "", roleOwner, roleEditor: // "": the local owner of a Baton without accounts
		return true
	case roleViewer:
		return a == actComment || a == actReview
	}
	return false
}

// forbidden is the error of an action the caller's role does not allow.
func forbidden(a action) error {
	switch a {
	case actShare:
		return store.Errorf(store.EFORBIDDEN, "Viewers cannot make or revoke links. Ask an editor or an owner of the workspace.")
	case actRequestReview:
		return store.Errorf(store.EFORBIDDEN, "Viewers cannot request reviews. Ask an editor or an owner of the workspace.")
	case actReplan:
		return store.Errorf(store.EFORBIDDEN, "Viewers cannot start planning. Ask an editor or an owner of the workspace.")
	}
	return store.Errorf(store.EFORBIDDEN, "You are not allowed to do that here.")
}

// requireCan returns forbidden(a) unless the caller may do a.
func requireCan(ctx context.Context, a action) error {
	if !can(ctx, a) {
		return forbidden(a)
	}
	return nil
}

// actor is who the request's caller is: the signed-in member, or the local
// owner "You" when there are no accounts.
func actor(ctx context.Context) store.Actor {
	st := views.RequestStateFrom(ctx)
	if st.UserID == "" {
		return store.Actor{Name: store.LocalOwnerName}
	}
	return store.Actor{UserID: st.UserID, Name: st.UserName}
}

// workspaceID is the request's workspace, from the same caller the agent
// API uses: a request without one matches no workspace, never the default.
func (s *Server) workspaceID(ctx context.Context) string {
	return callerFrom(ctx).WorkspaceID
}

// reviewMembers returns the members of the caller's workspace whom review
// can be requested of, the caller left out.
func (s *Server) reviewMembers(ctx context.Context) ([]views.Member, error) {
	st := views.RequestStateFrom(ctx)
	if st.WorkspaceID == "" {
		return nil, nil
	}
	ms, err := s.db.FindMemberships(ctx, store.MembershipFilter{WorkspaceID: st.WorkspaceID})
	if err != nil {
		return nil, err
	}
	var out []views.Member
	for _, m := range ms {
		if m.UserID != st.UserID {
			out = append(out, views.Member{UserID: m.UserID, Name: m.UserName, Role: string(m.Role)})
		}
	}
	return out, nil
}

// findMember returns the member of the caller's workspace with the user
// id, as a reviewer; ErrNotFound for anyone else.
func (s *Server) findMember(ctx context.Context, userID string) (store.Actor, error) {
	members, err := s.reviewMembers(ctx)
	if err != nil {
		return store.Actor{}, err
	}
	for _, m := range members {
		if m.UserID == userID {
			return store.Actor{UserID: m.UserID, Name: m.Name}, nil
		}
	}
	return store.Actor{}, store.Errorf(store.EINVALID, "%q is not a member of this workspace: review can be requested of members only.", userID)
}

// findHandoff returns a handoff of the caller's workspace: another
// workspace's answers ErrNotFound, as if it did not exist.
func (s *Server) findHandoff(ctx context.Context, id string) (*store.Handoff, error) {
	h, err := s.db.FindHandoffByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if ws := views.RequestStateFrom(ctx).WorkspaceID; ws != "" && ws != h.WorkspaceID {
		return nil, fmt.Errorf("handoff %s: %w", id, store.ErrNotFound)
	}
	return h, nil
}
