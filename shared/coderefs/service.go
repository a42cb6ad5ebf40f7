package coderefs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/uuid"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/jsondoc"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/resource"
	"github.com/flagplane/flagplane/shared/store"
)

// Service keeps repositories, branches and extinctions. Every change goes
// through the audited commit; reads of one repository or branch are Gets,
// lists are Queries of one partition.
type Service struct {
	table  store.Table
	log    *audit.Log
	repos  resource.Kit[Repository]
	logger *slog.Logger
	now    func() time.Time
}

// NewService works over table, auditing through log; logger (may be nil)
// hears about clean-ups that failed after a repository was deleted.
func NewService(table store.Table, log *audit.Log, logger *slog.Logger, now func() time.Time) *Service {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Service{table: table, log: log, repos: resource.New(&repoKind, table, log), logger: logger, now: now}
}

// Href is the API path of a repository.
func Href(name string) string { return "/api/v2/code-refs/repositories/" + name }

// BranchHref is the API path of a branch.
func BranchHref(repo, branch string) string {
	return Href(repo) + "/branches/" + pathEscape(branch)
}

// Resource is the resource specifier of a repository.
func Resource(name string) string { return "code-reference-repository/" + name }

const kind = "code-reference-repository"

func lower(name string) string { return strings.ToLower(name) }

func decodeRepo(it store.Item) (*Repository, error) {
	var r Repository
	if err := json.Unmarshal(it.Data, &r); err != nil {
		return nil, fmt.Errorf("decode code-reference repository %s: %w", it.PK, err)
	}
	r.Version = it.Version
	return &r, nil
}

func decodeBranch(it store.Item) (*Branch, error) {
	var b Branch
	if err := json.Unmarshal(it.Data, &b); err != nil {
		return nil, fmt.Errorf("decode code-reference branch %s: %w", it.SK, err)
	}
	b.Version = it.Version
	return &b, nil
}

func decodeExtinction(it store.Item) (Extinction, error) {
	var e Extinction
	if err := json.Unmarshal(it.Data, &e); err != nil {
		return e, fmt.Errorf("decode extinction %s: %w", it.SK, err)
	}
	return e, nil
}

// repoKind describes repositories to the resource kit. A delete answers
// its own conflict message and removes the branches after, so the kit
// creates, reads and updates them.
var repoKind = resource.Kind[Repository]{
	Audit: kind, Noun: "code-reference repository", Created: "createCodeRefsRepository", Deleted: "deleteCodeRefsRepository",
	Patchable: patchable, Called: "a code-reference repository",
	Item: func(r *Repository) (store.Item, error) {
		data, err := json.Marshal(r)
		g1, g2 := store.CodeRepoIndexKeys(lower(r.Name))
		return store.Item{GSI1PK: g1, GSI1SK: g2, Data: data}, err
	},
	Decode:  decodeRepo,
	Version: func(r *Repository) int64 { return r.Version },
	Name:    func(r *Repository) string { return r.Name },
}

// repoRef names the repository name names (case-insensitively); a name of
// the wrong form names none.
func repoRef(name string) resource.Ref {
	return resource.Ref{Key: store.CodeRepoKey(lower(name)), What: fmt.Sprintf("code-reference repository %q", name),
		Resource: Resource(name), Href: Href(name), Malformed: ValidName("repository name", name) != nil}
}

// Get returns one repository; names are case-insensitive. Missing is a 404.
func (s *Service) Get(ctx context.Context, name string) (*Repository, error) {
	return s.repos.Get(ctx, repoRef(name))
}

// List returns every repository by name.
func (s *Service) List(ctx context.Context) ([]*Repository, error) {
	return record.All(ctx, s.table, store.Query{Index: store.IndexGSI1, PK: store.CodeReposIndexPK}, "code-reference repositories", decodeRepo)
}

// Create adds a repository: type custom and default branch main unless given.
func (s *Service) Create(ctx context.Context, in RepositoryInput) (*Repository, error) {
	if err := ValidName("field \"name\"", in.Name); err != nil {
		return nil, err
	}
	r := &Repository{ID: uuid.NewString(), Name: in.Name, SourceLink: in.SourceLink, CommitURLTemplate: in.CommitURLTemplate,
		HunkURLTemplate: in.HunkURLTemplate, Type: in.Type, DefaultBranch: in.DefaultBranch, Enabled: true,
		CreationDate: s.now().UnixMilli()}
	if r.Type == "" {
		r.Type = "custom"
	}
	if r.DefaultBranch == "" {
		r.DefaultBranch = "main"
	}
	if err := r.check(); err != nil {
		return nil, err
	}
	return s.repos.Create(ctx, repoRef(r.Name), r, resource.Change{
		Exists: fmt.Sprintf("code-reference repository %q already exists (names are case-insensitive)", r.Name)})
}

// Edit is a parsed update of a repository: an RFC 6902 JSON patch, or an
// RFC 7386 merge patch (an object of the fields to set), which is what
// ld-find-code-refs sends.
type Edit struct {
	json    *patch.Patch
	merge   json.RawMessage
	Actions []string
}

// ParseEdit reads a patch body: an array (or {"patch": [...], "comment"})
// is a JSON patch; any other object is a merge patch. Fields outside the
// patchable ones are refused with a 400 naming them.
func ParseEdit(body []byte) (Edit, error) {
	trimmed := bytes.TrimSpace(body)
	isObject := len(trimmed) > 0 && trimmed[0] == '{'
	if isObject {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(trimmed, &fields); err != nil {
			return Edit{}, fault.New(fault.Invalid, "patch body is not valid JSON: %s", err.Error())
		}
		if _, wrapped := fields["patch"]; !wrapped {
			seen := map[string]bool{}
			var actions []string
			for f := range fields {
				a, ok := patchable[f]
				if !ok && f != "name" {
					return Edit{}, fault.New(fault.Invalid, "field %q cannot be patched: it is read-only or not a field of a code-reference repository", f)
				}
				if ok && !seen[a] {
					seen[a] = true
					actions = append(actions, a)
				}
			}
			if len(actions) == 0 {
				actions = []string{"updateCodeRefsRepositoryConfiguration"}
			}
			slices.Sort(actions)
			return Edit{merge: trimmed, Actions: actions}, nil
		}
	}
	p, err := patch.Parse(body)
	if err != nil {
		return Edit{}, err
	}
	actions, err := p.Actions(patchable, "a code-reference repository")
	if err != nil {
		return Edit{}, err
	}
	return Edit{json: &p, Actions: actions}, nil
}

// Patch applies an edit to a repository.
func (s *Service) Patch(ctx context.Context, name string, e Edit) (*Repository, error) {
	old, err := s.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	doc, err := json.Marshal(old)
	if err != nil {
		return nil, fmt.Errorf("encode code-reference repository %q: %w", name, err)
	}
	var out []byte
	var delta json.RawMessage
	comment := ""
	if e.json != nil {
		if out, err = e.json.Apply(doc); err != nil {
			return nil, err
		}
		delta, comment = e.json.Raw, e.json.Comment
	} else {
		if out, err = jsonpatch.MergePatch(doc, e.merge); err != nil {
			return nil, fault.New(fault.PatchFailed, "merge patch could not be applied: %s", err.Error())
		}
		delta = e.merge
	}
	var next Repository
	if err := jsondoc.Unmarshal(out, &next); err != nil {
		return nil, err
	}
	if next.Name != old.Name {
		return nil, fault.New(fault.Invalid, "field \"name\" cannot change: it names the repository (delete it and create another)")
	}
	next.ID, next.CreationDate = old.ID, old.CreationDate
	if err := next.check(); err != nil {
		return nil, err
	}
	actions := repoKind.Changed(old, &next)
	if len(actions) == 0 {
		return old, nil // nothing changes: no write, no audit entry
	}
	return s.repos.Update(ctx, repoRef(old.Name), old, &next, resource.Change{Actions: actions, Comment: comment, Delta: delta})
}

// Delete removes a repository. Its branches and extinctions become
// unreachable at once (they live under the repository's id) and are then
// removed; a clean-up cut short leaves only unreachable items.
func (s *Service) Delete(ctx context.Context, name string) error {
	old, err := s.Get(ctx, name)
	if err != nil {
		return err
	}
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: []store.Write{store.Delete(store.CodeRepoKey(lower(old.Name)), store.IfVersion(old.Version))},
		Kind:   kind, Resource: Resource(old.Name), Actions: []string{"deleteCodeRefsRepository"},
		Name: old.Name, Href: Href(old.Name), TitleVerb: "deleted the code-reference repository", Previous: old,
		Conflict: fmt.Sprintf("code-reference repository %q was changed by another request; read it again and retry", old.Name),
	})
	if err != nil {
		return err
	}
	if err := s.purge(ctx, old.ID); err != nil {
		s.logger.Warn("code-reference repository deleted; its branches were not all removed", "repository", old.Name, "error", err.Error())
	}
	return nil
}

// purge removes every item of a deleted repository's partition.
func (s *Service) purge(ctx context.Context, repoID string) error {
	q := store.Query{PK: store.CodeRefsPartition(repoID), Limit: 100}
	for {
		page, err := s.table.Query(ctx, q)
		if err != nil {
			return err
		}
		for _, it := range page.Items {
			if err := s.table.Delete(ctx, it.Key(), store.Cond{}); err != nil {
				return err
			}
		}
		if page.Cursor == "" {
			return nil
		}
		q.Cursor = page.Cursor
	}
}
