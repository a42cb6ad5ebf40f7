package application

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/store"
)

// Actions are the actions `_access` reports on an application.
var Actions = []string{"updateName", "updateDescription", "updateKind", "deleteApplication"}

// VersionActions are the actions `_access` reports on an application version.
var VersionActions = []string{"updateApplicationVersion", "deleteApplicationVersion"}

// patchable maps the fields an application patch may touch to their actions.
var patchable = map[string]string{"name": "updateName", "description": "updateDescription", "kind": "updateKind"}

// versionPatchable maps the fields a version patch may touch to their actions.
var versionPatchable = map[string]string{"name": "updateApplicationVersion", "supported": "updateApplicationVersion"}

// PatchActions returns the actions a JSON patch of an application performs.
func PatchActions(p patch.Patch) ([]string, error) { return p.Actions(patchable, "an application") }

// VersionPatchActions returns the actions a JSON patch of a version performs.
func VersionPatchActions(p patch.Patch) ([]string, error) {
	return p.Actions(versionPatchable, "an application version")
}

// Href is the API path of an application.
func Href(key string) string { return "/api/v2/applications/" + key }

func resource(key string) string { return "application/" + key }

// Service reads and edits applications; SDK events add them (shared/ingest).
type Service struct {
	table store.Table
	log   *audit.Log
}

// NewService reads and edits over table.
func NewService(table store.Table, log *audit.Log) *Service { return &Service{table: table, log: log} }

// Get returns one application.
func (s *Service) Get(ctx context.Context, key string) (*Application, error) {
	return record.Load(ctx, s.table, store.ApplicationKey(key), fmt.Sprintf("application %q", key), decodeApp)
}

func decodeApp(it store.Item) (*Application, error) {
	var a Application
	if err := json.Unmarshal(it.Data, &a); err != nil {
		return nil, fmt.Errorf("decode application %s: %w", it.PK, err)
	}
	a.Version = it.Version
	return &a, nil
}

// List returns every application, by key (one GSI1 partition).
func (s *Service) List(ctx context.Context) ([]*Application, error) {
	return record.All(ctx, s.table, store.Query{Index: store.IndexGSI1, PK: store.ApplicationsIndexPK}, "applications", decodeApp)
}

// Flags returns the flags the application evaluated, by project and key.
func (s *Service) Flags(ctx context.Context, key string) ([]Flag, error) {
	q := store.Query{PK: store.ApplicationPartition(key), SKPrefix: store.ApplicationFlagPrefix}
	return record.All(ctx, s.table, q, fmt.Sprintf("flags of application %q", key), func(it store.Item) (Flag, error) {
		var f Flag
		if err := json.Unmarshal(it.Data, &f); err != nil {
			return Flag{}, fmt.Errorf("decode flag of application %q: %w", key, err)
		}
		return f, nil
	})
}

// Versions returns an application's versions, by key; the application must exist.
func (s *Service) Versions(ctx context.Context, key string) ([]*Version, error) {
	if _, err := s.Get(ctx, key); err != nil {
		return nil, err
	}
	q := store.Query{PK: store.ApplicationPartition(key), SKPrefix: store.ApplicationVersionPrefix}
	return record.All(ctx, s.table, q, fmt.Sprintf("versions of application %q", key), decodeVersion)
}

func decodeVersion(it store.Item) (*Version, error) {
	var v Version
	if err := json.Unmarshal(it.Data, &v); err != nil {
		return nil, fmt.Errorf("decode application version %s: %w", it.SK, err)
	}
	v.Version = it.Version
	return &v, nil
}

// Patch applies a JSON patch (/name, /description, /kind) to an application.
func (s *Service) Patch(ctx context.Context, key string, p patch.Patch) (*Application, error) {
	if _, err := PatchActions(p); err != nil {
		return nil, err
	}
	old, err := s.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	var next Application
	if err := p.ApplyTo(old, &next); err != nil {
		return nil, err
	}
	next.Key, next.AutoAdded, next.CreationDate = old.Key, old.AutoAdded, old.CreationDate
	if strings.TrimSpace(next.Name) == "" {
		return nil, fault.New(fault.Invalid, "field \"name\" may not be empty")
	}
	switch next.Kind {
	case KindServer, KindBrowser, KindMobile:
	default:
		return nil, fault.New(fault.Invalid, "field \"kind\" must be server, browser or mobile, not %q", next.Kind)
	}
	actions := patch.ChangedFields(old, &next, patchable)
	if len(actions) == 0 {
		return old, nil
	}
	next.Version = old.Version + 1
	data, err := json.Marshal(&next)
	if err != nil {
		return nil, fmt.Errorf("encode application %q: %w", key, err)
	}
	k := store.ApplicationKey(key)
	gpk, gsk := store.ApplicationIndexKeys(key)
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: []store.Write{store.Put(store.Item{PK: k.PK, SK: k.SK, GSI1PK: gpk, GSI1SK: gsk, Version: next.Version, Data: data}, store.IfVersion(old.Version))},
		Kind:   "application", Resource: resource(key), Actions: actions, Name: next.Name, Href: Href(key),
		TitleVerb: "updated the application", Comment: p.Comment, Previous: old, Current: &next, Delta: p.Raw,
		Conflict: fmt.Sprintf("application %q was changed by another request; read it again and retry", key),
	})
	if err != nil {
		return nil, err
	}
	return &next, nil
}

// Delete removes an application with its versions and its record of flags
// evaluated. A later event from the application adds it again.
func (s *Service) Delete(ctx context.Context, key string) error {
	a, err := s.Get(ctx, key)
	if err != nil {
		return err
	}
	self := store.ApplicationKey(key)
	var rest []store.Key
	err = record.Each(ctx, s.table, store.Query{PK: store.ApplicationPartition(key)}, fmt.Sprintf("items of application %q", key), func(it store.Item) error {
		if it.SK != self.SK {
			rest = append(rest, it.Key())
		}
		return nil
	})
	if err != nil {
		return err
	}
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: []store.Write{store.Delete(self, store.IfVersion(a.Version))},
		Kind:   "application", Resource: resource(key), Actions: []string{"deleteApplication"},
		Name: a.Name, Href: Href(key), TitleVerb: "deleted the application", Previous: a,
		Conflict: fmt.Sprintf("application %q was changed by another request; try again", key),
	})
	if err != nil {
		return err
	}
	// Its versions and flags go after the audited delete: they are unreachable without it.
	for _, k := range rest {
		if err := s.table.Delete(ctx, k, store.Cond{}); err != nil {
			return fmt.Errorf("remove %s of application %q: %w", k.SK, key, err)
		}
	}
	return nil
}

// GetVersion returns one version of an application.
func (s *Service) GetVersion(ctx context.Context, appKey, versionKey string) (*Version, error) {
	what := fmt.Sprintf("version %q of application %q", versionKey, appKey)
	return record.Load(ctx, s.table, store.ApplicationVersionKey(appKey, versionKey), what, decodeVersion)
}

// PatchVersion applies a JSON patch (/name, /supported) to a version.
func (s *Service) PatchVersion(ctx context.Context, appKey, versionKey string, p patch.Patch) (*Version, error) {
	if _, err := VersionPatchActions(p); err != nil {
		return nil, err
	}
	old, err := s.GetVersion(ctx, appKey, versionKey)
	if err != nil {
		return nil, err
	}
	var next Version
	if err := p.ApplyTo(old, &next); err != nil {
		return nil, err
	}
	next.Key, next.AutoAdded, next.CreationDate = old.Key, old.AutoAdded, old.CreationDate
	if strings.TrimSpace(next.Name) == "" {
		return nil, fault.New(fault.Invalid, "field \"name\" may not be empty")
	}
	if next == *old {
		return old, nil
	}
	next.Version = old.Version + 1
	data, err := json.Marshal(&next)
	if err != nil {
		return nil, fmt.Errorf("encode application version %q: %w", versionKey, err)
	}
	k := store.ApplicationVersionKey(appKey, versionKey)
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: []store.Write{store.Put(store.Item{PK: k.PK, SK: k.SK, Version: next.Version, Data: data}, store.IfVersion(old.Version))},
		Kind:   "application-version", Resource: resource(appKey), Actions: []string{"updateApplicationVersion"},
		Name: next.Name, Href: Href(appKey) + "/versions/" + versionKey, TitleVerb: "updated the application version",
		Comment: p.Comment, Previous: old, Current: &next, Delta: p.Raw,
		Conflict: fmt.Sprintf("version %q of application %q was changed by another request; read it again and retry", versionKey, appKey),
	})
	if err != nil {
		return nil, err
	}
	return &next, nil
}

// DeleteVersion removes one version of an application.
func (s *Service) DeleteVersion(ctx context.Context, appKey, versionKey string) error {
	v, err := s.GetVersion(ctx, appKey, versionKey)
	if err != nil {
		return err
	}
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: []store.Write{store.Delete(store.ApplicationVersionKey(appKey, versionKey), store.IfVersion(v.Version))},
		Kind:   "application-version", Resource: resource(appKey), Actions: []string{"deleteApplicationVersion"},
		Name: v.Name, Href: Href(appKey) + "/versions/" + versionKey, TitleVerb: "deleted the application version", Previous: v,
		Conflict: fmt.Sprintf("version %q of application %q was changed by another request; try again", versionKey, appKey),
	})
	return err
}
