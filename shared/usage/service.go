package usage

import (
	"sync"
	"time"

	"github.com/flagplane/flagplane/shared/store"
)

// Service bundles the rollup and the reader over one table and clock.
type Service struct {
	Table  store.Table
	Rollup *Rollup
	Reader *Reader

	mu  sync.RWMutex
	now func() time.Time
}

// NewService reads and rolls up table, on the system clock.
func NewService(table store.Table) *Service {
	s := &Service{Table: table, Reader: NewReader(table), now: time.Now}
	s.Rollup = NewRollup(table, s.Now)
	return s
}

// Now is the service's clock.
func (s *Service) Now() time.Time {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.now()
}

// SetClock replaces the clock (tests).
func (s *Service) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}
