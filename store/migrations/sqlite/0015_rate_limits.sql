-- +goose Up
-- Token buckets of the request rate limits, when the server counts them
-- in the database (several instances on one database; a single SQLite
-- instance keeps them in memory).
CREATE TABLE rate_limits (
    key    TEXT PRIMARY KEY,
    tokens REAL NOT NULL,
    at_ms  INTEGER NOT NULL
);
CREATE INDEX rate_limits_at ON rate_limits(at_ms);

-- +goose Down
DROP TABLE rate_limits;
