package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Snapshot is a frozen handoff: the canonical JSON of its decisions, files,
// risks and summary, with the JSON's sha256. Snapshots are never changed or
// removed; the database refuses both.
type Snapshot struct {
	ID        string
	HandoffID string
	Payload   SnapshotPayload
	JSON      []byte // the canonical JSON, exactly as stored and hashed
	SHA256    string
	CreatedAt time.Time
}

// SnapshotPayload is what a snapshot freezes. Its JSON encoding is canonical:
// fixed field order, items in review order, no insignificant whitespace.
type SnapshotPayload struct {
	HandoffID       string             `json:"handoffId"`
	ThreadID        string             `json:"threadId"`
	Summary         string             `json:"summary"`
	Decisions       []SnapshotDecision `json:"decisions"`
	FilesReferenced []SnapshotFile     `json:"filesReferenced"`
	Risks           []SnapshotRisk     `json:"risks"`
	FrozenAt        time.Time          `json:"frozenAt"`
}

// SnapshotDecision is a frozen decision. Label is its position, D1, D2, …
type SnapshotDecision struct {
	Label      string   `json:"label"`
	ID         string   `json:"id"`
	Content    string   `json:"content"`
	Source     Source   `json:"source"`
	Confidence *float64 `json:"confidence,omitempty"`
	MessageIDs []string `json:"messageIds"`
}

// SnapshotFile is a frozen file reference.
type SnapshotFile struct {
	ID        string `json:"id"`
	Path      string `json:"path"`
	Relevance Level  `json:"relevance"`
	Context   string `json:"context"`
}

// SnapshotRisk is a frozen risk.
type SnapshotRisk struct {
	ID          string `json:"id"`
	Description string `json:"description"`
	Severity    Level  `json:"severity"`
	Mitigation  string `json:"mitigation,omitempty"`
}

// DecisionByLabel returns the decision labelled label (D1, D2, …).
func (p *SnapshotPayload) DecisionByLabel(label string) (SnapshotDecision, bool) {
	for _, d := range p.Decisions {
		if strings.EqualFold(d.Label, label) {
			return d, true
		}
	}
	return SnapshotDecision{}, false
}

func canonicalJSON(p *SnapshotPayload) ([]byte, string, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(b)
	return b, hex.EncodeToString(sum[:]), nil
}

const snapshotColumns = `id, handoff_id, payload, sha256, created_at`

func scanSnapshot(s scanner) (*Snapshot, error) {
	var sn Snapshot
	var payload, created string
	if err := s.Scan(&sn.ID, &sn.HandoffID, &payload, &sn.SHA256, &created); err != nil {
		return nil, err
	}
	sn.JSON = []byte(payload)
	if err := json.Unmarshal(sn.JSON, &sn.Payload); err != nil {
		return nil, fmt.Errorf("snapshot %s payload: %w", sn.ID, err)
	}
	sn.CreatedAt = parseTime(created)
	return &sn, nil
}

// FindSnapshotByID returns a snapshot, or ErrNotFound.
func (db *DB) FindSnapshotByID(ctx context.Context, id string) (*Snapshot, error) {
	sn, err := scanSnapshot(db.read.QueryRowContext(ctx, `SELECT `+snapshotColumns+` FROM snapshots WHERE id = ?`, id))
	if err != nil {
		return nil, findErr(err, "snapshot %s", id)
	}
	return sn, nil
}

// FindSnapshots lists a handoff's snapshots, newest first.
func (db *DB) FindSnapshots(ctx context.Context, handoffID string) ([]*Snapshot, error) {
	snaps, err := scanAll(scanSnapshot)(db.readRows(ctx,
		`SELECT `+snapshotColumns+` FROM snapshots WHERE handoff_id = ? ORDER BY created_at DESC, id DESC`, handoffID))
	if err != nil {
		return nil, fmt.Errorf("find snapshots: %w", err)
	}
	return snaps, nil
}

// FindUncapturedSnapshots returns snapshots not yet kept in workspace
// memory (a capture that failed or was cut short), oldest first, at most limit.
func (db *DB) FindUncapturedSnapshots(ctx context.Context, limit int) ([]*Snapshot, error) {
	snaps, err := scanAll(scanSnapshot)(db.read.QueryContext(ctx,
		`SELECT `+snapshotColumns+` FROM snapshots
		 WHERE id NOT IN (SELECT snapshot_id FROM memory_captures)
		 ORDER BY created_at, id LIMIT ?`, limit))
	if err != nil {
		return nil, fmt.Errorf("find uncaptured snapshots: %w", err)
	}
	return snaps, nil
}
