// Package resource is the kit of the plain resources, each one item of the
// table: read by key with a 404 that names it, created once (409 when it
// exists), patched and deleted on the version read (409 when it changed
// since), every change committed through the audit log with its entry and
// outbox record. A service describes its resource once, as a Kind, and
// names each item with a Ref; what differs (which fields a patch keeps,
// how a resource is validated) stays in the service.
package resource

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/store"
)

// Ref names one resource: where it is stored and how messages and audit
// entries show it.
type Ref struct {
	Key store.Key
	// What names it in messages: `custom role "ops"` answers
	// `custom role "ops" not found`.
	What string
	// Resource is its resource specifier ("role/ops"); Href its API path.
	Resource string
	Href     string
	// Missing, when set, is the message of its 404 in place of "<What> not
	// found": one that says where it was looked for, say.
	Missing string
	// Malformed says the id the client gave cannot name one of its kind (a
	// key of the wrong form): it is not found, without a read.
	Malformed bool
}

func (r Ref) missing() string { return cmp.Or(r.Missing, r.What+" not found") }

// Kind describes one kind of plain resource, stored as one item holding V.
type Kind[V any] struct {
	// Audit is the kind audit entries show ("role"); Noun completes their
	// titles ("created the custom role").
	Audit string
	Noun  string
	// Created and Deleted are the actions of a create and of a delete
	// ("createRole", "deleteRole").
	Created, Deleted string
	// Patchable maps each field a JSON patch may touch to its action;
	// Called names the kind in the refusal of any other ("a custom role").
	Patchable map[string]string
	Called    string

	// Item is v's stored form (its data, index keys and time to live): the
	// kit sets its key, from the Ref, and its version.
	Item func(v *V) (store.Item, error)
	// Decode reads a stored item, version included.
	Decode func(store.Item) (*V, error)
	// Version is the version v was read at; Name is how audit entries name it.
	Version func(v *V) int64
	Name    func(v *V) string
	// Shown is v as audit entries show it (v itself when nil), a secret
	// masked say.
	Shown func(v *V) any
}

// PatchActions returns the actions a JSON patch of the kind performs,
// refusing any path outside Patchable with a 400.
func (k *Kind[V]) PatchActions(p patch.Patch) ([]string, error) {
	return p.Actions(k.Patchable, k.Called)
}

func (k *Kind[V]) shown(v *V) any {
	if v == nil {
		return nil
	}
	if k.Shown != nil {
		return k.Shown(v)
	}
	return v
}

// Kit is a Kind over the table and the audit log every change goes through.
type Kit[V any] struct {
	*Kind[V]
	Table store.Table
	Log   *audit.Log
}

// New returns the kit of kind over table and log.
func New[V any](kind *Kind[V], table store.Table, log *audit.Log) Kit[V] {
	return Kit[V]{Kind: kind, Table: table, Log: log}
}

// Change is what a change adds to the write of the resource and to what
// its audit entry says; the zero value adds nothing.
type Change struct {
	// Actions are the actions of an update (a patch finds its own).
	Actions []string
	// Also are writes committed in the same transaction, with their own
	// conditions: when one fails nothing is written.
	Also    []store.Write
	Comment string
	Delta   json.RawMessage
	Parent  *audit.Parent
	// TitleVerb replaces the default "created the <noun>", "updated the
	// <noun>" or "deleted the <noun>".
	TitleVerb string
	// Exists is the message of the 409 a create answers when the resource
	// (or a condition of Also) already exists: "<What> already exists"
	// when empty.
	Exists string
}

// Get reads the resource r names; a missing one is a 404 "<What> not
// found" (or Missing).
func (k Kit[V]) Get(ctx context.Context, r Ref) (*V, error) {
	if r.Malformed {
		return nil, fault.New(fault.NotFound, "%s", r.missing())
	}
	v, err := record.Load(ctx, k.Table, r.Key, r.What, k.Decode)
	if fault.Is(err, fault.NotFound) {
		return nil, fault.Wrap(err, fault.NotFound, "%s", r.missing())
	}
	return v, err
}

// Create stores v at version 1 if nothing is stored at its key, and
// returns it as stored.
func (k Kit[V]) Create(ctx context.Context, r Ref, v *V, c Change) (*V, error) {
	it, err := k.item(r, v, 1)
	if err != nil {
		return nil, err
	}
	_, err = k.Log.Commit(ctx, audit.Change{
		Writes: append([]store.Write{store.Put(it, store.IfNotExists())}, c.Also...),
		Kind:   k.Audit, Resource: r.Resource, Actions: []string{k.Created},
		Name: k.Name(v), Href: r.Href, TitleVerb: cmp.Or(c.TitleVerb, "created the "+k.Noun), Comment: c.Comment,
		Parent: c.Parent, Current: k.shown(v),
	})
	if errors.Is(err, store.ErrConditionFailed) {
		return nil, fault.Wrap(err, fault.Conflict, "%s", cmp.Or(c.Exists, r.What+" already exists"))
	}
	if err != nil {
		return nil, err
	}
	return k.Decode(it)
}

// Patch applies a JSON patch to the resource r names on the version it is
// read at. settle receives the resource read and the patched copy: it puts
// back what a patch may not change and validates the copy. A patch that
// changes no patchable field writes nothing and returns the resource read.
func (k Kit[V]) Patch(ctx context.Context, r Ref, p patch.Patch, settle func(old, next *V) error) (*V, error) {
	if _, err := k.PatchActions(p); err != nil {
		return nil, err
	}
	old, err := k.Get(ctx, r)
	if err != nil {
		return nil, err
	}
	var next V
	if err := p.ApplyTo(old, &next); err != nil {
		return nil, err
	}
	if err := settle(old, &next); err != nil {
		return nil, err
	}
	actions := k.Changed(old, &next)
	if len(actions) == 0 {
		return old, nil
	}
	return k.Update(ctx, r, old, &next, Change{Actions: actions, Comment: p.Comment, Delta: p.Raw})
}

// Changed returns the actions of the patchable fields that differ between
// old and next, sorted, each once.
func (k *Kind[V]) Changed(old, next *V) []string {
	return slices.Compact(patch.ChangedFields(old, next, k.Patchable))
}

// Update writes next over old, on the version old was read at, and returns
// next as stored. A change since is a 409 "<What> was changed by another
// request; read it again and retry", and nothing is written.
func (k Kit[V]) Update(ctx context.Context, r Ref, old, next *V, c Change) (*V, error) {
	from := k.Version(old)
	it, err := k.item(r, next, from+1)
	if err != nil {
		return nil, err
	}
	_, err = k.Log.Commit(ctx, audit.Change{
		Writes: append([]store.Write{store.Put(it, store.IfVersion(from))}, c.Also...),
		Kind:   k.Audit, Resource: r.Resource, Actions: c.Actions,
		Name: k.Name(next), Href: r.Href, TitleVerb: cmp.Or(c.TitleVerb, "updated the "+k.Noun), Comment: c.Comment,
		Parent: c.Parent, Previous: k.shown(old), Current: k.shown(next), Delta: c.Delta,
		Conflict: r.What + " was changed by another request; read it again and retry",
	})
	if err != nil {
		return nil, err
	}
	return k.Decode(it)
}

// Delete removes the resource r names, on the version it is read at.
func (k Kit[V]) Delete(ctx context.Context, r Ref, c Change) error {
	old, err := k.Get(ctx, r)
	if err != nil {
		return err
	}
	return k.Remove(ctx, r, old, c)
}

// Remove deletes old, read before, on the version it was read at. A change
// since is a 409 "<What> was changed by another request; try again", and
// nothing is written.
func (k Kit[V]) Remove(ctx context.Context, r Ref, old *V, c Change) error {
	_, err := k.Log.Commit(ctx, audit.Change{
		Writes: append([]store.Write{store.Delete(r.Key, store.IfVersion(k.Version(old)))}, c.Also...),
		Kind:   k.Audit, Resource: r.Resource, Actions: []string{k.Deleted},
		Name: k.Name(old), Href: r.Href, TitleVerb: cmp.Or(c.TitleVerb, "deleted the "+k.Noun), Comment: c.Comment,
		Parent: c.Parent, Previous: k.shown(old),
		Conflict: r.What + " was changed by another request; try again",
	})
	return err
}

func (k *Kind[V]) item(r Ref, v *V, version int64) (store.Item, error) {
	it, err := k.Item(v)
	if err != nil {
		return store.Item{}, fmt.Errorf("encode %s: %w", r.What, err)
	}
	it.PK, it.SK, it.Version = r.Key.PK, r.Key.SK, version
	return it, nil
}
