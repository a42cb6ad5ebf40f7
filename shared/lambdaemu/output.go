package lambdaemu

import (
	"bytes"
	"io"
	"sync"
)

// lockedWriter serializes writes of many processes to one writer; a nil w
// discards.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	if l.w == nil {
		return len(p), nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// prefixWriter writes whole lines, each starting with prefix, so the output
// of concurrent processes does not interleave mid-line.
type prefixWriter struct {
	prefix string
	w      io.Writer

	mu  sync.Mutex
	buf []byte
}

// maxLine flushes a line that grows beyond it without a newline.
const maxLine = 64 << 10

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			if len(p.buf) < maxLine {
				return len(b), nil
			}
			i = len(p.buf) - 1
		}
		line := make([]byte, 0, len(p.prefix)+i+2)
		line = append(line, p.prefix...)
		line = append(line, bytes.TrimRight(p.buf[:i+1], "\n")...)
		line = append(line, '\n')
		if _, err := p.w.Write(line); err != nil {
			return len(b), err
		}
		p.buf = p.buf[i+1:]
	}
}

// Flush writes a last line that has no newline.
func (p *prefixWriter) Flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.buf) > 0 {
		_, _ = p.w.Write(append(append([]byte(p.prefix), p.buf...), '\n'))
		p.buf = nil
	}
}
