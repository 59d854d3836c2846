package web

import (
	"context"
	"time"

	"github.com/labstack/echo/v4/middleware"
	"golang.org/x/time/rate"
)

// rateStore keeps rate-limit buckets where every instance sees them.
type rateStore interface {
	// Shared reports whether other instances serve the same database.
	Shared() bool
	// TakeToken takes a token from the bucket key; see store.DB.TakeToken.
	TakeToken(ctx context.Context, key string, rate float64, burst int) (bool, error)
}

// limiterStore is where the rate limit named name counts requests: in this
// process, or in the database when several instances share it, so that a
// client cannot multiply its rate by the number of instances.
func (s *Server) limiterStore(name string, perSecond float64, burst int) middleware.RateLimiterStore {
	if s.db.Shared() {
		return &sharedLimiter{db: s.db, name: name, rate: perSecond, burst: burst}
	}
	return middleware.NewRateLimiterMemoryStoreWithConfig(middleware.RateLimiterMemoryStoreConfig{
		Rate: rate.Limit(perSecond), Burst: burst, ExpiresIn: 3 * time.Minute,
	})
}

// sharedLimiter is a rate limit counted in the database.
type sharedLimiter struct {
	db    rateStore
	name  string
	rate  float64
	burst int
}

// Allow takes a token for the client id; a database that does not answer
// in time refuses the request rather than letting it through unlimited.
func (l *sharedLimiter) Allow(id string) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return l.db.TakeToken(ctx, l.name+":"+id, l.rate, l.burst)
}
