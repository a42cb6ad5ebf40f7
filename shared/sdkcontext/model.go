// Package sdkcontext holds what SDK events teach about contexts: context
// instances (the latest attributes of each single or multi-kind context an
// SDK reported), context kinds, and the index of attribute names and
// values. shared/ingest writes them; this package reads them, edits context
// kinds and deletes instances.
package sdkcontext

import (
	"crypto/sha256"
	"encoding/hex"
)

// Instance is one context instance as stored.
type Instance struct {
	ID string `json:"id"`
	// Context is the context as the SDK last sent it, JSON-encoded.
	Context string `json:"context"`
	// LastSeen is Unix milliseconds.
	LastSeen      int64  `json:"lastSeen"`
	ApplicationID string `json:"applicationId,omitempty"`
	// Kinds are the individual contexts, "kind:key" each, in kind order.
	Kinds          []string `json:"kinds"`
	AnonymousKinds []string `json:"anonymousKinds,omitempty"`
}

// AssociatedContexts is how many individual contexts the instance holds.
func (i *Instance) AssociatedContexts() int { return len(i.Kinds) }

// Count is an environment's number of context instances, in all and by
// application id ("" for none), kept by ingestion and deletes.
type Count struct {
	Total int64            `json:"total"`
	ByApp map[string]int64 `json:"byApp"`
}

// Add adds d to c; applications whose count falls to zero are dropped.
func (c *Count) Add(d Count) {
	c.Total += d.Total
	for app, n := range d.ByApp {
		c.ByApp[app] += n
		if c.ByApp[app] <= 0 {
			delete(c.ByApp, app)
		}
	}
}

// Ref points from one individual context to an instance holding it.
type Ref struct {
	ID       string `json:"id"`
	LastSeen int64  `json:"lastSeen"`
}

// Kind is one context kind of a project.
type Kind struct {
	Key             string `json:"key"`
	Name            string `json:"name"`
	Description     string `json:"description"`
	Version         int64  `json:"version"`
	CreationDate    int64  `json:"creationDate"`
	LastModified    int64  `json:"lastModified"`
	LastSeen        int64  `json:"lastSeen,omitempty"`
	CreatedFrom     string `json:"createdFrom"`
	HideInTargeting bool   `json:"hideInTargeting"`
	Archived        bool   `json:"archived"`
}

// Kind origins, as LaunchDarkly names them.
const (
	FromDefault = "default"
	FromAutoAdd = "auto-add"
	FromAPI     = "api"
)

// AttrName is one indexed attribute name of a kind; Weight counts the
// context instances (single or multi-kind) first seen with it.
type AttrName struct {
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Weight int64  `json:"weight"`
	// Values counts the distinct values indexed; past a bound (see
	// shared/ingest) new values are no longer indexed.
	Values int64 `json:"values"`
}

// AttrValue is one indexed value of an attribute of a kind; Value is JSON;
// Weight counts the context instances first seen with it.
type AttrValue struct {
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Value  string `json:"value"`
	Weight int64  `json:"weight"`
}

// Hash is the hex SHA-256 of s: context keys and attribute names in sort keys.
func Hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// InstanceID is the id of the context whose fully-qualified key is fqKey.
func InstanceID(fqKey string) string { return Hash(fqKey)[:32] }
