-- +goose Up
-- The PostgreSQL schema: written by the pg-schema work (placeholder).
SELECT 1;

-- +goose Down
SELECT 1;
