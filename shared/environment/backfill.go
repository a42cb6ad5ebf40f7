package environment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/flagplane/flagplane/shared/store"
)

// backfillAttempts is how many times one environment's missing credential
// items are tried when a concurrent writer changes it in between.
const backfillAttempts = 5

// BackfillCredentials writes the credential items that environments made
// before the credential index lack, so their SDK key, mobile key and
// client-side id authenticate again. It lists the projects through GSI1
// and each project's environments with one Query (never a Scan), and
// returns how many items it wrote: 0 when none was missing, as on a second
// run.
//
// It is safe beside concurrent writers: each item is put only when absent,
// in one transaction with a check that the environment is still at the
// version read, so it neither replaces an item nor indexes a secret the
// environment no longer holds (a key reset in between makes it read the
// environment again).
func BackfillCredentials(ctx context.Context, table store.Table) (int, error) {
	written := 0
	q := store.Query{Index: store.IndexGSI1, PK: store.ProjectsIndexPK}
	for {
		page, err := table.Query(ctx, q)
		if err != nil {
			return written, fmt.Errorf("backfill credentials: list projects: %w", err)
		}
		for _, it := range page.Items {
			projectKey := it.GSI1SK
			if it.Key() != store.ProjectKey(projectKey) {
				continue // not a project item
			}
			var p struct {
				Deleting bool `json:"deleting"`
			}
			if err := json.Unmarshal(it.Data, &p); err != nil {
				return written, fmt.Errorf("backfill credentials: decode project %q: %w", projectKey, err)
			}
			if p.Deleting {
				continue // its environments are being removed
			}
			n, err := backfillProject(ctx, table, projectKey)
			written += n
			if err != nil {
				return written, fmt.Errorf("backfill credentials: %w", err)
			}
		}
		if page.Cursor == "" {
			return written, nil
		}
		q.Cursor = page.Cursor
	}
}

func backfillProject(ctx context.Context, table store.Table, projectKey string) (int, error) {
	written := 0
	q := store.Query{PK: store.ProjectPartition(projectKey), SKPrefix: store.EnvironmentSKPrefix}
	for {
		page, err := table.Query(ctx, q)
		if err != nil {
			return written, fmt.Errorf("list environments of project %q: %w", projectKey, err)
		}
		for _, it := range page.Items {
			e, err := decode(it)
			if err != nil {
				return written, fmt.Errorf("project %q: %w", projectKey, err)
			}
			n, err := backfillEnvironment(ctx, table, e)
			written += n
			if err != nil {
				return written, fmt.Errorf("environment %q of project %q: %w", e.Key, projectKey, err)
			}
		}
		if page.Cursor == "" {
			return written, nil
		}
		q.Cursor = page.Cursor
	}
}

// backfillEnvironment writes e's missing credential items, reading e again
// when it changed since it was read.
func backfillEnvironment(ctx context.Context, table store.Table, e *Environment) (int, error) {
	for attempt := 1; ; attempt++ {
		missing, err := missingCredentials(ctx, table, e)
		if err != nil || len(missing) == 0 {
			return 0, err
		}
		puts, err := e.CredentialWrites(missing...)
		if err != nil {
			return 0, err
		}
		envKey := store.EnvironmentKey(e.ProjectKey, e.Key)
		writes := []store.Write{store.Check(envKey, store.IfVersion(e.Version))}
		for _, w := range puts {
			w.Cond = store.IfNotExists() // never replace what a concurrent create or reset wrote
			writes = append(writes, w)
		}
		err = table.Transact(ctx, writes)
		if err == nil {
			return len(puts), nil
		}
		if !errors.Is(err, store.ErrConditionFailed) && !errors.Is(err, store.ErrConflict) {
			return 0, fmt.Errorf("write credential items: %w", err)
		}
		if attempt == backfillAttempts {
			return 0, fmt.Errorf("write credential items: the environment kept changing, %d attempts: %w", attempt, err)
		}
		// The environment changed (a key reset, say), was deleted, or a
		// concurrent backfill wrote an item first: read it again.
		it, err := table.Get(ctx, envKey)
		if errors.Is(err, store.ErrNotFound) {
			return 0, nil
		}
		if err != nil {
			return 0, fmt.Errorf("read the environment again: %w", err)
		}
		if e, err = decode(it); err != nil {
			return 0, err
		}
	}
}

// missingCredentials are the kinds of e's current secrets that have no
// credential item.
func missingCredentials(ctx context.Context, table store.Table, e *Environment) ([]CredentialKind, error) {
	var missing []CredentialKind
	for _, kind := range []CredentialKind{ServerCredential, MobileCredential, ClientSideCredential} {
		secret := e.secretOf(kind)
		if secret == "" {
			continue
		}
		_, err := table.Get(ctx, credentialKey(kind, secret))
		if errors.Is(err, store.ErrNotFound) {
			missing = append(missing, kind)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s credential item: %w", credentialName[kind], err)
		}
	}
	return missing, nil
}
