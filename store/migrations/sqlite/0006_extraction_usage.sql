-- +goose Up
-- What a model extraction cost, so that it counts toward the token budget.
ALTER TABLE extraction_runs ADD COLUMN input_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE extraction_runs ADD COLUMN output_tokens INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE extraction_runs DROP COLUMN output_tokens;
ALTER TABLE extraction_runs DROP COLUMN input_tokens;
