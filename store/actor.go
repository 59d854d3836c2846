package store

import (
	"context"
	"database/sql"
	"errors"
)

// actorKey is the context key of the person a change is made by.
type actorKey struct{}

// WithActor returns a copy of ctx that names the user whose request makes
// the changes done with it. Messages people send, pins, added and edited
// items, freezes and plan runs record that user (created_by, updated_by);
// the review screen shows who last changed an item. A change made with a
// ctx that names nobody (the CLI, a test, a model's reply) records none.
func WithActor(ctx context.Context, userID string) context.Context {
	return context.WithValue(ctx, actorKey{}, userID)
}

// actor returns the user ctx names for created_by and updated_by columns:
// nil (NULL) when it names none.
func actor(ctx context.Context) any {
	if id, _ := ctx.Value(actorKey{}).(string); id != "" {
		return id
	}
	return nil
}

// actorName returns the name of the user ctx names, "" for none.
func actorName(ctx context.Context, tx *txn) (string, error) {
	id := actor(ctx)
	if id == nil {
		return "", nil
	}
	var name string
	err := tx.QueryRowContext(ctx, `SELECT name FROM users WHERE id = ?`, id).Scan(&name)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return name, err
}
