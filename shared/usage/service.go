package usage

import (
	"time"

	"github.com/flagplane/flagplane/shared/store"
)

// Service bundles the rollup and the reader over one table and clock.
type Service struct {
	Table  store.Table
	Rollup *Rollup
	Reader *Reader

	now func() time.Time
}

// NewService reads and rolls up table, on the clock now.
func NewService(table store.Table, now func() time.Time) *Service {
	return &Service{Table: table, Reader: NewReader(table, now), Rollup: NewRollup(table, now), now: now}
}

// Now is the service's clock.
func (s *Service) Now() time.Time { return s.now() }
