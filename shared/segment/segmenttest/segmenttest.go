// Package segmenttest sets up, for tests of other packages, a segment
// service over a fresh embedded store with an audit log (audittest) that
// holds one environment, whose item a segment's create checks.
package segmenttest

import (
	"context"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/audit/audittest"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/segment"
	"github.com/flagplane/flagplane/shared/store"
)

// AnyEnv finds every environment, for a service built over another table.
type AnyEnv struct{}

func (AnyEnv) Get(_ context.Context, _, envKey string) (*environment.Environment, error) {
	return &environment.Environment{Key: envKey}, nil
}

// New returns the segment service and the rig under it, with environment
// envKey of project projectKey stored.
func New(tb testing.TB, projectKey, envKey string) (*segment.Service, audittest.Rig) {
	tb.Helper()
	rig := audittest.New(tb, time.Now)
	k := store.EnvironmentKey(projectKey, envKey)
	if err := rig.Table.Put(context.Background(), store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: []byte(`{}`)}, store.Cond{}); err != nil {
		tb.Fatal(err)
	}
	return segment.NewService(rig.Table, rig.Log, AnyEnv{}, time.Now), rig
}
