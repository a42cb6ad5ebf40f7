// Package cache holds the bounded maps the per-process caches use: decoded
// items, SDK models, encoded answers. Each entry's key says everything its
// value depends on, so entries are never invalidated, only dropped.
package cache

import "sync"

// Bounded is a map of at most Max entries, safe for concurrent use. When
// it is full it is emptied: callers recompute what they miss, and the
// entries of keys nobody asks for again (an older version's) go too.
type Bounded[K comparable, V any] struct {
	Max int
	mu  sync.Mutex
	m   map[K]V
}

// Get returns the value under k.
func (c *Bounded[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

// Put stores v under k, emptying the map first when it is full.
func (c *Bounded[K, V]) Put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= max(c.Max, 1) {
		c.m = make(map[K]V)
	}
	c.m[k] = v
}
