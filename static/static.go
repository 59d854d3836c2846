// Package static embeds Baton's front-end files (vendored htmx and its SSE
// extension, one CSS file, a little JS) and serves them under
// content-hashed URLs with long cache headers.
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed *.css *.js *.svg vendor/*.js
var files embed.FS

// Prefix is the URL path under which assets are served.
const Prefix = "/static/"

// Assets maps asset names to their content-hashed URLs and serves them.
type Assets struct {
	urls   map[string]string // name -> /static/<hash>/<name>
	hashes map[string]string // name -> hash
}

// New hashes every embedded file.
func New() *Assets {
	a := &Assets{urls: map[string]string{}, hashes: map[string]string{}}
	fs.WalkDir(files, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := files.ReadFile(name)
		sum := sha256.Sum256(b)
		h := hex.EncodeToString(sum[:6])
		a.hashes[name] = h
		a.urls[name] = Prefix + h + "/" + name
		return nil
	})
	return a
}

// URL returns the content-hashed URL of an asset, e.g. URL("app.css").
// It panics on an unknown name: a missing asset is a programming error.
func (a *Assets) URL(name string) string {
	u, ok := a.urls[name]
	if !ok {
		panic("static: no asset " + name)
	}
	return u
}

// ServeHTTP serves /static/<hash>/<name>. A matching hash is cached for a
// year; a stale hash still gets the current file, but is revalidated.
func (a *Assets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, Prefix)
	hash, name, ok := strings.Cut(rest, "/")
	name = path.Clean(name)
	want, known := a.hashes[name]
	if !ok || !known {
		http.NotFound(w, r)
		return
	}
	if hash == want {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	http.ServeFileFS(w, r, files, name)
}
