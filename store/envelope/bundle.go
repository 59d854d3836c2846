package envelope

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"time"
)

// HandoffsDir is the folder of an export that holds envelopes.
const HandoffsDir = "documents/handoffs"

// ArtifactsDir is the folder of an export that holds artifacts.
const ArtifactsDir = "documents"

// FileName is where an export keeps an envelope:
// documents/handoffs/handoff_[session-id]_[source]_to_[target]_[timestamp].json,
// the time stamp in UTC as 20260102T150405Z.
func FileName(e *Envelope) string {
	return fmt.Sprintf("%s/handoff_%s_%s_to_%s_%s.json", HandoffsDir, fileSafe(e.SessionID),
		fileSafe(string(e.SourceAgent.AgentType)), fileSafe(string(e.TargetAgent.AgentType)),
		e.Timestamp.UTC().Format("20060102T150405Z"))
}

// BaseName is FileName without its folder, for Content-Disposition.
func BaseName(e *Envelope) string { return path.Base(FileName(e)) }

// PlanFile is where an export keeps a plan's markdown:
// documents/PLAN_[ProductSlug]_[YYYY-MM-DD].md, dated in UTC.
func PlanFile(slug string, at time.Time) Path {
	return Path(fmt.Sprintf("%s/PLAN_%s_%s.md", ArtifactsDir, fileSafe(slug), at.UTC().Format("2006-01-02")))
}

// fileSafe keeps a name component to letters, digits, - and _.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 127 && Slug(string(r)) == string(r) {
			return r
		}
		return '_'
	}, s)
}

// PayloadSHA256 is the hex sha256 of the payload's JSON as Baton writes
// it, which identifies an import: the same payload in the same session is
// the same import, however its envelope was spaced.
func PayloadSHA256(e *Envelope) (string, error) {
	b, err := json.Marshal(e.Payload)
	if err != nil {
		return "", fmt.Errorf("hash payload: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// Bundle is an export: the envelope, its JSON as exported, and the
// artifact files it names, by their paths.
type Bundle struct {
	Envelope *Envelope
	JSON     []byte // Encode(Envelope), as NewBundle checked it
	Files    map[string][]byte
}

// Zip writes the bundle as a zip: the envelope at FileName and each file
// at its path, in name order.
func (b *Bundle) Zip() ([]byte, error) {
	data := b.JSON
	if data == nil {
		var err error
		if data, err = Encode(b.Envelope); err != nil {
			return nil, err
		}
	}
	names := make([]string, 0, len(b.Files))
	for name := range b.Files {
		names = append(names, name)
	}
	slices.Sort(names)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	write := func(name string, data []byte) error {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: b.Envelope.Timestamp})
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	if err := write(FileName(b.Envelope), data); err != nil {
		return nil, fmt.Errorf("zip export: %w", err)
	}
	for _, name := range names {
		if err := write(name, b.Files[name]); err != nil {
			return nil, fmt.Errorf("zip export: %w", err)
		}
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("zip export: %w", err)
	}
	return buf.Bytes(), nil
}

// ZipName is the file name of the bundle's zip: the envelope's, as .zip.
func (b *Bundle) ZipName() string {
	return strings.TrimSuffix(BaseName(b.Envelope), ".json") + ".zip"
}

// maxZipFiles bounds the files read from an export zip.
const maxZipFiles = 1000

// ReadZip reads an export zip: every envelope under documents/handoffs/
// (undecoded, by name) and the set of the zip's file names, for
// Options.Bundle. It reads at most MaxBytes of each envelope and refuses
// names that are not safe relative paths.
func ReadZip(data []byte) (envelopes map[string][]byte, files map[string]bool, err error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, nil, fmt.Errorf("not a zip file: %w", err)
	}
	if len(zr.File) > maxZipFiles {
		return nil, nil, fmt.Errorf("the zip holds %d files; an export holds at most %d", len(zr.File), maxZipFiles)
	}
	envelopes, files = map[string][]byte{}, map[string]bool{}
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, "/") {
			continue
		}
		var c checker
		c.path(jsonPath(f.Name), Path(f.Name))
		if len(c.ps) > 0 {
			return nil, nil, fmt.Errorf("the zip holds a file at an unsafe path: %s", c.ps[0])
		}
		files[f.Name] = true
		if path.Dir(f.Name) != HandoffsDir || path.Ext(f.Name) != ".json" {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", f.Name, err)
		}
		b, err := io.ReadAll(io.LimitReader(rc, MaxBytes+1))
		rc.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", f.Name, err)
		}
		envelopes[f.Name] = b
	}
	return envelopes, files, nil
}
