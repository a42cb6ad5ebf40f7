// Package credtest makes a store look like one written before the SDK
// credential index: it deletes the credential items of every environment,
// as tests of the backfill need.
package credtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/flagplane/flagplane/shared/store"
)

// Env is one environment's place and current secrets.
type Env struct {
	ProjectKey, Key                 string
	SDKKey, MobileKey, ClientSideID string
}

// Keys are the keys of the environment's credential items.
func (e Env) Keys() []store.Key {
	return []store.Key{Key("sdk", e.SDKKey), Key("mob", e.MobileKey), Key("cid", e.ClientSideID)}
}

// Key is the credential item of one secret of one kind ("sdk", "mob", "cid").
func Key(kind, secret string) store.Key {
	sum := sha256.Sum256([]byte(secret))
	return store.CredentialKey(kind, hex.EncodeToString(sum[:]))
}

// Environments lists every environment of every project, through GSI1 and
// one Query per project.
func Environments(tb testing.TB, table store.Table) []Env {
	tb.Helper()
	ctx := context.Background()
	var out []Env
	projects, err := table.Query(ctx, store.Query{Index: store.IndexGSI1, PK: store.ProjectsIndexPK})
	if err != nil {
		tb.Fatalf("list projects: %v", err)
	}
	for _, p := range projects.Items {
		envs, err := table.Query(ctx, store.Query{PK: p.PK, SKPrefix: store.EnvironmentSKPrefix})
		if err != nil {
			tb.Fatalf("list environments of %s: %v", p.PK, err)
		}
		for _, it := range envs.Items {
			var e struct {
				ProjectKey string `json:"projectKey"`
				Key        string `json:"key"`
				APIKey     string `json:"apiKey"`
				MobileKey  string `json:"mobileKey"`
				ID         string `json:"_id"`
			}
			if err := json.Unmarshal(it.Data, &e); err != nil {
				tb.Fatalf("decode environment %s/%s: %v", it.PK, it.SK, err)
			}
			out = append(out, Env{ProjectKey: p.GSI1SK, Key: e.Key, SDKKey: e.APIKey, MobileKey: e.MobileKey, ClientSideID: e.ID})
		}
	}
	return out
}

// Drop deletes the credential items of every environment and returns the
// environments, as a store written before the credential index holds them.
func Drop(tb testing.TB, table store.Table) []Env {
	tb.Helper()
	envs := Environments(tb, table)
	for _, e := range envs {
		for _, k := range e.Keys() {
			if err := table.Delete(context.Background(), k, store.IfExists()); err != nil {
				tb.Fatalf("delete credential item %s of %s/%s: %v", k.PK, e.ProjectKey, e.Key, err)
			}
		}
	}
	return envs
}
