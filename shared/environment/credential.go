package environment

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/store"
)

// CredentialKind names the kind of secret an SDK authenticates with.
type CredentialKind string

const (
	// ServerCredential is the SDK key of server-side SDKs.
	ServerCredential CredentialKind = "sdk"
	// MobileCredential is the mobile key.
	MobileCredential CredentialKind = "mob"
	// ClientSideCredential is the client-side id: the environment's _id.
	ClientSideCredential CredentialKind = "cid"
)

// CredentialName names one credential of an environment without its
// secret ("sdk:<environment id>"): what limits count it by.
func CredentialName(kind CredentialKind, envID string) string {
	return string(kind) + ":" + envID
}

// credentialRef is what a credential item holds: the environment it opens.
type credentialRef struct {
	ProjectKey string `json:"projectKey"`
	EnvKey     string `json:"environmentKey"`
}

func credentialKey(kind CredentialKind, secret string) store.Key {
	sum := sha256.Sum256([]byte(secret))
	return store.CredentialKey(string(kind), hex.EncodeToString(sum[:]))
}

// secretOf is the environment's current secret of that kind.
func (e *Environment) secretOf(kind CredentialKind) string {
	switch kind {
	case ServerCredential:
		return e.APIKey
	case MobileCredential:
		return e.MobileKey
	case ClientSideCredential:
		return e.ID
	}
	return ""
}

// CredentialWrites are the writes that index the environment's secrets of
// the given kinds (all three when none are given), to be committed with
// the environment itself.
func (e *Environment) CredentialWrites(kinds ...CredentialKind) ([]store.Write, error) {
	if len(kinds) == 0 {
		kinds = []CredentialKind{ServerCredential, MobileCredential, ClientSideCredential}
	}
	data, err := json.Marshal(credentialRef{ProjectKey: e.ProjectKey, EnvKey: e.Key})
	if err != nil {
		return nil, fmt.Errorf("encode credential of environment %q: %w", e.Key, err)
	}
	out := make([]store.Write, 0, len(kinds))
	for _, kind := range kinds {
		k := credentialKey(kind, e.secretOf(kind))
		out = append(out, store.Put(store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: data}, store.Cond{}))
	}
	return out, nil
}

// ByCredential returns the environment whose current secret of that kind is
// secret: two reads. An unknown, reset or deleted secret is an Unauthorized error.
func (s *Service) ByCredential(ctx context.Context, kind CredentialKind, secret string) (*Environment, error) {
	refused := func(err error) error {
		return fault.Wrap(err, fault.Unauthorized, "the credential is not a current %s of any environment", credentialName[kind])
	}
	if secret == "" || credentialName[kind] == "" {
		return nil, refused(errors.New("no credential"))
	}
	it, err := s.table.Get(ctx, credentialKey(kind, secret))
	if errors.Is(err, store.ErrNotFound) {
		return nil, refused(err)
	}
	if err != nil {
		return nil, fmt.Errorf("load %s credential: %w", credentialName[kind], err)
	}
	var ref credentialRef
	if err := json.Unmarshal(it.Data, &ref); err != nil {
		return nil, fmt.Errorf("decode %s credential: %w", credentialName[kind], err)
	}
	e, err := s.Get(ctx, ref.ProjectKey, ref.EnvKey)
	if fault.Is(err, fault.NotFound) {
		return nil, refused(err)
	}
	if err != nil {
		return nil, err
	}
	if e.secretOf(kind) != secret {
		return nil, refused(errors.New("the secret was reset"))
	}
	return e, nil
}

var credentialName = map[CredentialKind]string{ServerCredential: "SDK key", MobileCredential: "mobile key", ClientSideCredential: "client-side id"}
