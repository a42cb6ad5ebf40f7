package dynamo

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/flagplane/flagplane/shared/store"
)

// secretKey is the item holding the cursor secret shared by every instance.
var secretKey = store.MetaKey("cursor-secret")

const secretSize = 32

// loadSecret reads the shared cursor secret, creating it when absent. Two
// instances racing to create it both end up with the one that was written
// first: the loser's conditional put fails and it reads the winner's.
func (t *Table) loadSecret(ctx context.Context) ([]byte, error) {
	it, err := t.Get(ctx, secretKey)
	if err == nil {
		return it.Data, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	secret := make([]byte, secretSize)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	err = t.Put(ctx, store.Item{PK: secretKey.PK, SK: secretKey.SK, Version: 1, Data: secret}, store.IfNotExists())
	switch {
	case err == nil:
		return secret, nil
	case errors.Is(err, store.ErrConditionFailed):
		it, err := t.Get(ctx, secretKey)
		if err != nil {
			return nil, fmt.Errorf("re-read after losing the race to create it: %w", err)
		}
		return it.Data, nil
	default:
		return nil, err
	}
}
