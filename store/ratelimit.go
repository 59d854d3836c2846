package store

import (
	"context"
	"database/sql"
	"errors"
	"sync/atomic"
	"time"
)

// RateBucketIdle is how long a rate-limit bucket nobody used is kept.
const RateBucketIdle = 3 * time.Minute

// TakeToken takes one token from the bucket named key, which refills at
// rate tokens a second up to burst, and reports whether there was one.
// The buckets live in the database, so that every instance on it counts
// the same requests (a single SQLite instance limits in memory instead).
func (db *DB) TakeToken(ctx context.Context, key string, rate float64, burst int) (bool, error) {
	now := db.now()
	nowMS := now.UnixMilli()
	var allowed bool
	err := db.inTx(ctx, func(tx *txn) error {
		tokens := float64(burst)
		var have float64
		var at int64
		err := tx.QueryRowContext(ctx, `SELECT tokens, at_ms FROM rate_limits WHERE key = ?`+tx.eng.forUpdate(), key).Scan(&have, &at)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		default:
			tokens = min(float64(burst), have+float64(max(0, nowMS-at))/1000*rate)
		}
		allowed = tokens >= 1
		if allowed {
			tokens--
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO rate_limits (key, tokens, at_ms) VALUES (?, ?, ?)
			ON CONFLICT (key) DO UPDATE SET tokens = excluded.tokens, at_ms = excluded.at_ms`, key, tokens, nowMS)
		return err
	})
	if err != nil {
		return false, err
	}
	if rateTakes.Add(1)%256 == 0 {
		_, _ = db.write.ExecContext(ctx, `DELETE FROM rate_limits WHERE at_ms < ?`, now.Add(-RateBucketIdle).UnixMilli())
	}
	return allowed, nil
}

// rateTakes counts TakeToken calls, to sweep idle buckets now and then.
var rateTakes atomic.Uint64
