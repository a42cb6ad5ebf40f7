package featurestore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/bolt"
)

// countingTable counts the reads made through it.
type countingTable struct {
	store.Table
	gets, queries int
}

func (c *countingTable) Get(ctx context.Context, k store.Key) (store.Item, error) {
	c.gets++
	return c.Table.Get(ctx, k)
}

func (c *countingTable) Query(ctx context.Context, q store.Query) (store.Page, error) {
	c.queries++
	return c.Table.Query(ctx, q)
}

func TestConsumeLooksUpEachResourceOfAnEntryOnce(t *testing.T) {
	bt, err := bolt.Open(filepath.Join(t.TempDir(), "consume.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bt.Close() })
	flagRes := "proj/p:env/production:flag/checkout"
	configRes := "proj/p:env/production:integration/redis/" + uuid.NewString()
	tests := []struct {
		name                   string
		entry                  audit.Entry
		wantQueries, wantReads int
	}{
		{"a flag change of three actions queries the environment's delivery configurations once",
			audit.Entry{ID: "e1", Kind: "flag", Accesses: []audit.Access{{Action: "updateOn", Resource: flagRes}, {Action: "updateRules", Resource: flagRes}, {Action: "updateFallthrough", Resource: flagRes}}},
			1, 0},
		{"a configuration's change of two actions reads the configuration once",
			audit.Entry{ID: "e2", Kind: "integration", Accesses: []audit.Access{{Action: "updateName", Resource: configRes}, {Action: "updateOn", Resource: configRes}}},
			0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reads := &countingTable{Table: bt}
			s := NewService(reads, nil, nil, nil, nil, nil, nil, time.Now)
			if err := s.Consume(context.Background(), tt.entry, 1); err != nil {
				t.Fatal(err)
			}
			if reads.queries != tt.wantQueries || reads.gets != tt.wantReads {
				t.Errorf("%d Queries and %d Gets; want %d and %d", reads.queries, reads.gets, tt.wantQueries, tt.wantReads)
			}
		})
	}
}
