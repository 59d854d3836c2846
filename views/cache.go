package views

import "sync"

// HTMLCache is a bounded cache of rendered HTML, safe for concurrent use.
// When full it starts over: cheap, bounded, and a busy page refills it at
// once.
type HTMLCache struct {
	mu      sync.RWMutex
	max     int
	entries map[string]string
}

// NewHTMLCache makes a cache of at most max entries.
func NewHTMLCache(max int) *HTMLCache {
	return &HTMLCache{max: max, entries: make(map[string]string)}
}

// Get returns the HTML cached under key.
func (c *HTMLCache) Get(key string) (string, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.entries[key]
	return v, ok
}

// lookup is Get for a key held in bytes; it allocates nothing.
func (c *HTMLCache) lookup(key []byte) (string, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.entries[string(key)]
	return v, ok
}

// Put caches html under key.
func (c *HTMLCache) Put(key, html string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.max {
		clear(c.entries)
	}
	c.entries[key] = html
}
