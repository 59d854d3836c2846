-- +goose Up
-- Token buckets of the request rate limits, shared by the instances on
-- one database (a single SQLite instance keeps them in memory).
CREATE TABLE rate_limits (
    key    TEXT PRIMARY KEY,
    tokens DOUBLE PRECISION NOT NULL,
    at_ms  BIGINT NOT NULL
);
CREATE INDEX rate_limits_at ON rate_limits(at_ms);

-- +goose Down
DROP TABLE rate_limits;
