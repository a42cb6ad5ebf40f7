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
	"github.com/flagplane/flagplane/shared/resource"
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
func PatchActions(p patch.Patch) ([]string, error) { return kind.PatchActions(p) }

// VersionPatchActions returns the actions a JSON patch of a version performs.
func VersionPatchActions(p patch.Patch) ([]string, error) {
	return versionKind.PatchActions(p)
}

// Href is the API path of an application.
func Href(key string) string { return "/api/v2/applications/" + key }

// kind and versionKind describe applications and their versions to the resource kit.
var (
	kind = resource.Kind[Application]{
		Audit: "application", Noun: "application", Deleted: "deleteApplication",
		Patchable: patchable, Called: "an application",
		Item: func(a *Application) (store.Item, error) {
			data, err := json.Marshal(a)
			gpk, gsk := store.ApplicationIndexKeys(a.Key)
			return store.Item{GSI1PK: gpk, GSI1SK: gsk, Data: data}, err
		},
		Decode:  decodeApp,
		Version: func(a *Application) int64 { return a.Version },
		Name:    func(a *Application) string { return a.Name },
	}
	versionKind = resource.Kind[Version]{
		Audit: "application-version", Noun: "application version", Deleted: "deleteApplicationVersion",
		Patchable: versionPatchable, Called: "an application version",
		Item: func(v *Version) (store.Item, error) {
			data, err := json.Marshal(v)
			return store.Item{Data: data}, err
		},
		Decode:  decodeVersion,
		Version: func(v *Version) int64 { return v.Version },
		Name:    func(v *Version) string { return v.Name },
	}
)

func ref(key string) resource.Ref {
	return resource.Ref{Key: store.ApplicationKey(key), What: fmt.Sprintf("application %q", key), Resource: "application/" + key, Href: Href(key)}
}

// versionRef names a version; its audit entries name the application as their resource.
func versionRef(appKey, versionKey string) resource.Ref {
	return resource.Ref{Key: store.ApplicationVersionKey(appKey, versionKey), What: fmt.Sprintf("version %q of application %q", versionKey, appKey),
		Resource: "application/" + appKey, Href: Href(appKey) + "/versions/" + versionKey}
}

// Service reads and edits applications; SDK events add them (shared/ingest).
type Service struct {
	table    store.Table
	apps     resource.Kit[Application]
	versions resource.Kit[Version]
}

// NewService reads and edits over table.
func NewService(table store.Table, log *audit.Log) *Service {
	return &Service{table: table, apps: resource.New(&kind, table, log), versions: resource.New(&versionKind, table, log)}
}

// Get returns one application.
func (s *Service) Get(ctx context.Context, key string) (*Application, error) {
	return s.apps.Get(ctx, ref(key))
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
	return s.apps.Patch(ctx, ref(key), p, func(old, next *Application) error {
		next.Key, next.AutoAdded, next.CreationDate = old.Key, old.AutoAdded, old.CreationDate
		if strings.TrimSpace(next.Name) == "" {
			return fault.New(fault.Invalid, "field \"name\" may not be empty")
		}
		switch next.Kind {
		case KindServer, KindBrowser, KindMobile:
			return nil
		default:
			return fault.New(fault.Invalid, "field \"kind\" must be server, browser or mobile, not %q", next.Kind)
		}
	})
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
	if err := s.apps.Remove(ctx, ref(key), a, resource.Change{}); err != nil {
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
	return s.versions.Get(ctx, versionRef(appKey, versionKey))
}

// PatchVersion applies a JSON patch (/name, /supported) to a version.
func (s *Service) PatchVersion(ctx context.Context, appKey, versionKey string, p patch.Patch) (*Version, error) {
	return s.versions.Patch(ctx, versionRef(appKey, versionKey), p, func(old, next *Version) error {
		next.Key, next.AutoAdded, next.CreationDate = old.Key, old.AutoAdded, old.CreationDate
		if strings.TrimSpace(next.Name) == "" {
			return fault.New(fault.Invalid, "field \"name\" may not be empty")
		}
		return nil
	})
}

// DeleteVersion removes one version of an application.
func (s *Service) DeleteVersion(ctx context.Context, appKey, versionKey string) error {
	return s.versions.Delete(ctx, versionRef(appKey, versionKey), resource.Change{})
}
