// Package logtest holds the log sink of tests that run a server in
// goroutines and read what it logged.
package logtest

import (
	"bytes"
	"sync"
)

// Buffer collects what concurrent writers write while a test reads it.
// The zero value is ready to use.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
