package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Sign-in limits: after this many failures within the window, per account
// or per client, sign-in is refused until old failures leave the window.
const (
	SignInFailureLimit  = 10
	SignInFailureWindow = 15 * time.Minute
)

// RecordSignInFailure counts a failed sign-in against the email typed
// (whether or not it has an account) and the client's address, and
// forgets failures older than the window.
func (db *DB) RecordSignInFailure(ctx context.Context, email, client string) error {
	now := db.now()
	if len(email) > MaxEmailLen {
		email = email[:MaxEmailLen] // no address is longer: a guess, kept short
	}
	return db.inTx(ctx, func(tx *txn) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO sign_in_failures (email, client, at) VALUES (?, ?, ?)`,
			strings.ToLower(strings.TrimSpace(email)), client, formatTime(now)); err != nil {
			return fmt.Errorf("record sign-in failure: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM sign_in_failures WHERE at <= ?`, formatTime(now.Add(-SignInFailureWindow))); err != nil {
			return fmt.Errorf("record sign-in failure: prune: %w", err)
		}
		return nil
	})
}

// CountSignInFailures returns the failed sign-ins within the window for
// the email and for the client.
func (db *DB) CountSignInFailures(ctx context.Context, email, client string) (byAccount, byClient int, err error) {
	if len(email) > MaxEmailLen {
		email = email[:MaxEmailLen]
	}
	since := formatTime(db.now().Add(-SignInFailureWindow))
	err = db.readRow(ctx,
		`SELECT (SELECT COUNT(*) FROM sign_in_failures WHERE email = ? AND at > ?),
		        (SELECT COUNT(*) FROM sign_in_failures WHERE client = ? AND at > ?)`,
		strings.ToLower(strings.TrimSpace(email)), since, client, since).Scan(&byAccount, &byClient)
	if err != nil {
		return 0, 0, fmt.Errorf("count sign-in failures: %w", err)
	}
	return byAccount, byClient, nil
}

// SignInLimited reports whether sign-in is refused for email or client:
// either has SignInFailureLimit failures within the window.
func (db *DB) SignInLimited(ctx context.Context, email, client string) (bool, error) {
	a, c, err := db.CountSignInFailures(ctx, email, client)
	return a >= SignInFailureLimit || c >= SignInFailureLimit, err
}
