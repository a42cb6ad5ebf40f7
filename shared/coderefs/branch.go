package coderefs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/store"
)

func pathEscape(s string) string { return url.PathEscape(s) }

// branchSummary is what an audit entry shows of a branch: its references
// are left out, as they may be far larger than an entry may be.
type branchSummary struct {
	Name             string `json:"name"`
	Head             string `json:"head"`
	UpdateSequenceID *int64 `json:"updateSequenceId,omitempty"`
	SyncTime         int64  `json:"syncTime"`
	Hunks            int    `json:"hunks"`
	Flags            int    `json:"flags"`
}

func (b *Branch) summary() *branchSummary {
	if b == nil {
		return nil
	}
	out := &branchSummary{Name: b.Name, Head: b.Head, UpdateSequenceID: b.UpdateSequenceID, SyncTime: b.SyncTime}
	for _, flags := range b.Counts {
		for _, n := range flags {
			out.Hunks += n
			out.Flags++
		}
	}
	return out
}

// Branches returns a repository's branches, by name, without references.
func (s *Service) Branches(ctx context.Context, repo *Repository) ([]*Branch, error) {
	out, err := record.All(ctx, s.table, store.Query{PK: store.CodeRefsPartition(repo.ID), SKPrefix: store.CodeBranchPrefix},
		fmt.Sprintf("branches of code-reference repository %q", repo.Name), decodeBranch)
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// branch returns a branch's summary item, or nil when there is none.
func (s *Service) branch(ctx context.Context, repo *Repository, name string) (*Branch, error) {
	it, err := s.table.Get(ctx, store.CodeBranchKey(repo.ID, name))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load branch %q of code-reference repository %q: %w", name, repo.Name, err)
	}
	return decodeBranch(it)
}

// Branch returns one branch with its references, keeping only the hunks
// of projKey and flagKey when they are set. A missing branch is a 404.
func (s *Service) Branch(ctx context.Context, repo *Repository, name, projKey, flagKey string) (*Branch, error) {
	b, err := s.branch(ctx, repo, name)
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, fault.New(fault.NotFound, "branch %q of code-reference repository %q not found", name, repo.Name)
	}
	return s.WithReferences(ctx, repo, b, projKey, flagKey)
}

// WithReferences fills in the references of b, a branch as Branches lists
// it, filtered as Branch does; a list showing references this way reads
// each branch's summary once.
func (s *Service) WithReferences(ctx context.Context, repo *Repository, b *Branch, projKey, flagKey string) (*Branch, error) {
	// A concurrent upload may replace the chunks between the summary and
	// their reads; each chunk carries the summary's version, so a torn
	// read is seen and the summary read again.
	for attempt := 1; ; attempt++ {
		refs, ok, err := s.references(ctx, repo, b)
		if err != nil {
			return nil, err
		}
		if ok {
			b.References = filterRefs(refs, projKey, flagKey)
			return b, nil
		}
		if attempt == 3 {
			return nil, fault.New(fault.OptimisticLock, "branch %q of code-reference repository %q is being uploaded; try again", b.Name, repo.Name)
		}
		name := b.Name
		if b, err = s.branch(ctx, repo, name); err != nil {
			return nil, err
		}
		if b == nil {
			return nil, fault.New(fault.NotFound, "branch %q of code-reference repository %q not found", name, repo.Name)
		}
	}
}

func (s *Service) references(ctx context.Context, repo *Repository, b *Branch) ([]Reference, bool, error) {
	var data []byte
	for n := 0; n < b.Chunks; n++ {
		it, err := s.table.Get(ctx, store.CodeBranchChunkKey(repo.ID, b.Name, n))
		if errors.Is(err, store.ErrNotFound) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("load references of branch %q: %w", b.Name, err)
		}
		if it.Version != b.Version {
			return nil, false, nil
		}
		data = append(data, it.Data...)
	}
	refs := []Reference{}
	if len(data) > 0 {
		if err := json.Unmarshal(data, &refs); err != nil {
			return nil, false, fmt.Errorf("decode references of branch %q: %w", b.Name, err)
		}
	}
	return refs, true, nil
}

// Upload creates or replaces a branch with a scanner's upload (putBranch).
// An upload whose updateSequenceId is not above the stored one is refused
// (fault.SequenceConflict) and changes nothing. Every flag the branch
// referenced before and no longer does gets an extinction at the upload's
// head, time the commit's (else the sync time).
func (s *Service) Upload(ctx context.Context, repoName, branchName string, in BranchInput) (*Branch, []Extinction, error) {
	if err := validBranch("branch name", branchName); err != nil {
		return nil, nil, err
	}
	switch {
	case in.Name == nil || *in.Name == "":
		return nil, nil, fault.New(fault.Invalid, "field \"name\" is required")
	case *in.Name != branchName:
		return nil, nil, fault.New(fault.Invalid, "field \"name\" is %q but the path names branch %q", *in.Name, branchName)
	case in.Head == nil || *in.Head == "":
		return nil, nil, fault.New(fault.Invalid, "field \"head\" is required")
	case len(*in.Head) > maxRevisionLen:
		return nil, nil, fault.New(fault.Invalid, "field \"head\" is longer than %d bytes", maxRevisionLen)
	case in.SyncTime == nil:
		return nil, nil, fault.New(fault.Invalid, "field \"syncTime\" is required (Unix milliseconds)")
	case *in.SyncTime < 0 || in.CommitTime < 0:
		return nil, nil, fault.New(fault.Invalid, "fields \"syncTime\" and \"commitTime\" must not be negative")
	}
	if err := checkReferences(in.References); err != nil {
		return nil, nil, err
	}
	repo, err := s.Get(ctx, repoName)
	if err != nil {
		return nil, nil, err
	}
	if !repo.Enabled {
		return nil, nil, fault.New(fault.Invalid, "code-reference repository %q is disabled: enable it (PATCH /enabled) to upload", repo.Name)
	}
	old, err := s.branch(ctx, repo, branchName)
	if err != nil {
		return nil, nil, err
	}
	if old != nil && old.UpdateSequenceID != nil && in.UpdateSequenceID != nil && *in.UpdateSequenceID <= *old.UpdateSequenceID {
		return nil, nil, fault.New(fault.SequenceConflict, "updateSequenceId %d is not above the stored %d of branch %q", *in.UpdateSequenceID, *old.UpdateSequenceID, branchName)
	}
	refs := in.References
	if refs == nil {
		refs = []Reference{}
	}
	next := &Branch{Name: branchName, Head: *in.Head, UpdateSequenceID: in.UpdateSequenceID, SyncTime: *in.SyncTime,
		CommitTime: in.CommitTime, Counts: counts(refs), Version: 1}
	if old != nil {
		next.Version = old.Version + 1
		if next.UpdateSequenceID == nil {
			next.UpdateSequenceID = old.UpdateSequenceID
		}
	}
	data, err := json.Marshal(refs)
	if err != nil {
		return nil, nil, fmt.Errorf("encode references of branch %q: %w", branchName, err)
	}
	var writes []store.Write
	for n := 0; n*chunkBytes < len(data); n++ { // data is at least "[]": one chunk or more
		end := min((n+1)*chunkBytes, len(data))
		k := store.CodeBranchChunkKey(repo.ID, branchName, n)
		writes = append(writes, store.Put(store.Item{PK: k.PK, SK: k.SK, Version: next.Version, Data: data[n*chunkBytes : end]}, store.Cond{}))
		next.Chunks = n + 1
	}
	if old != nil {
		for n := next.Chunks; n < old.Chunks; n++ {
			writes = append(writes, store.Delete(store.CodeBranchChunkKey(repo.ID, branchName, n), store.Cond{}))
		}
	}
	meta, err := json.Marshal(next)
	if err != nil {
		return nil, nil, fmt.Errorf("encode branch %q: %w", branchName, err)
	}
	bk := store.CodeBranchKey(repo.ID, branchName)
	cond := store.IfNotExists()
	if old != nil {
		cond = store.IfVersion(old.Version)
	}
	writes = append(writes, store.Put(store.Item{PK: bk.PK, SK: bk.SK, Version: next.Version, Data: meta}, cond),
		store.Check(store.CodeRepoKey(lower(repo.Name)), store.IfVersion(repo.Version)))

	extinct := s.extinctions(old, next)
	// Extinctions that do not fit beside the branch's writes are recorded
	// first: each is keyed by branch, revision, project and flag, so an
	// upload retried after a failure writes them again, never twice.
	room := store.MaxWrites - 2 - len(writes)
	if len(extinct) > room {
		if err := s.record(ctx, repo, branchName, extinct[:len(extinct)-room]); err != nil {
			return nil, nil, err
		}
	}
	tail := extinct[max(0, len(extinct)-room):]
	for _, e := range tail {
		w, err := extinctionPut(repo, branchName, e)
		if err != nil {
			return nil, nil, err
		}
		writes = append(writes, w)
	}
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: writes, Kind: kind, Resource: Resource(repo.Name), Actions: []string{"updateCodeRefsRepositoryBranches"},
		Name: repo.Name, Href: BranchHref(repo.Name, branchName), TitleVerb: fmt.Sprintf("uploaded code references of branch %q to", branchName),
		Previous: old.summary(), Current: next.summary(),
		Conflict: fmt.Sprintf("branch %q of code-reference repository %q was changed by another request; upload again", branchName, repo.Name),
	})
	if err != nil {
		return nil, nil, err
	}
	next.References = refs
	return next, extinct, nil
}

// extinctions lists, sorted, the flags old referenced and next does not.
func (s *Service) extinctions(old, next *Branch) []Extinction {
	if old == nil {
		return nil
	}
	when := next.CommitTime
	if when == 0 {
		when = next.SyncTime
	}
	var out []Extinction
	for proj, flags := range old.Counts {
		for flag, n := range flags {
			if n > 0 && next.Counts[proj][flag] == 0 {
				out = append(out, Extinction{Revision: next.Head, Time: when, ProjKey: proj, FlagKey: flag, Branch: next.Name,
					Message: fmt.Sprintf("no code references to flag %q remain on branch %q as of %s", flag, next.Name, next.Head)})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].ProjKey != out[j].ProjKey {
			return out[i].ProjKey < out[j].ProjKey
		}
		return out[i].FlagKey < out[j].FlagKey
	})
	return out
}

func extinctionPut(repo *Repository, branch string, e Extinction) (store.Write, error) {
	e.Branch = branch
	data, err := json.Marshal(e)
	if err != nil {
		return store.Write{}, fmt.Errorf("encode extinction of flag %q: %w", e.FlagKey, err)
	}
	k := store.CodeExtinctionKey(repo.ID, branch, e.Revision, e.ProjKey, e.FlagKey)
	return store.Put(store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: data}, store.Cond{}), nil
}

// extinctionNote is what an audit entry shows of an extinction (the
// message left out, so a batch's entry stays small).
type extinctionNote struct {
	Revision string `json:"revision"`
	ProjKey  string `json:"projKey"`
	FlagKey  string `json:"flagKey"`
	Time     int64  `json:"time"`
}

// record writes extinctions of a branch in audited batches.
func (s *Service) record(ctx context.Context, repo *Repository, branch string, list []Extinction) error {
	for start := 0; start < len(list); start += maxBatch {
		batch := list[start:min(start+maxBatch, len(list))]
		writes := []store.Write{store.Check(store.CodeRepoKey(lower(repo.Name)), store.IfVersion(repo.Version))}
		notes := make([]extinctionNote, 0, len(batch))
		for _, e := range batch {
			w, err := extinctionPut(repo, branch, e)
			if err != nil {
				return err
			}
			writes = append(writes, w)
			notes = append(notes, extinctionNote{Revision: e.Revision, ProjKey: e.ProjKey, FlagKey: e.FlagKey, Time: e.Time})
		}
		_, err := s.log.Commit(ctx, audit.Change{
			Writes: writes, Kind: kind, Resource: Resource(repo.Name), Actions: []string{"updateCodeRefsRepositoryBranches"},
			Name: repo.Name, Href: BranchHref(repo.Name, branch), TitleVerb: fmt.Sprintf("recorded flag extinctions on branch %q of", branch),
			Current:  notes,
			Conflict: fmt.Sprintf("code-reference repository %q was changed by another request; try again", repo.Name),
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// PostExtinctions records extinctions a scanner found (postExtinction).
// The branch must exist. One reported again (same revision, project and
// flag) replaces the first, so retries and an upload's own record of the
// same extinction make one.
func (s *Service) PostExtinctions(ctx context.Context, repoName, branchName string, in []ExtinctionInput) error {
	if len(in) == 0 {
		return fault.New(fault.Invalid, "the body must be a non-empty array of extinctions")
	}
	list := make([]Extinction, 0, len(in))
	seen := map[string]bool{}
	for i, e := range in {
		field := func(name string) string { return fmt.Sprintf("[%d].%s", i, name) }
		switch {
		case e.Revision == nil || *e.Revision == "":
			return fault.New(fault.Invalid, "field %q is required", field("revision"))
		case len(*e.Revision) > maxRevisionLen:
			return fault.New(fault.Invalid, "field %q is longer than %d bytes", field("revision"), maxRevisionLen)
		case e.Message == nil:
			return fault.New(fault.Invalid, "field %q is required", field("message"))
		case e.Time == nil || *e.Time <= 0:
			return fault.New(fault.Invalid, "field %q is required (Unix milliseconds, above 0)", field("time"))
		case e.ProjKey == nil || *e.ProjKey == "" || strings.Contains(*e.ProjKey, "#"):
			return fault.New(fault.Invalid, "field %q is required (a project key)", field("projKey"))
		case e.FlagKey == nil || *e.FlagKey == "" || strings.Contains(*e.FlagKey, "#"):
			return fault.New(fault.Invalid, "field %q is required (a flag key)", field("flagKey"))
		}
		x := Extinction{Revision: *e.Revision, Message: cut(*e.Message), Time: *e.Time, ProjKey: *e.ProjKey, FlagKey: *e.FlagKey, Branch: branchName}
		if k := x.Revision + "\x00" + x.ProjKey + "\x00" + x.FlagKey; !seen[k] {
			seen[k] = true
			list = append(list, x)
		}
	}
	repo, err := s.Get(ctx, repoName)
	if err != nil {
		return err
	}
	b, err := s.branch(ctx, repo, branchName)
	if err != nil {
		return err
	}
	if b == nil {
		return fault.New(fault.NotFound, "branch %q of code-reference repository %q not found: upload it first", branchName, repo.Name)
	}
	return s.record(ctx, repo, branchName, list)
}

// ExtinctionQuery filters getExtinctions. Branch empty means each
// repository's default branch; From and To (both or neither) bound the time.
type ExtinctionQuery struct {
	Repo, Branch, ProjKey, FlagKey string
	From, To                       *int64
}

// Extinctions returns extinctions by repository name, newest first. One
// Query per repository read (one in all when Repo is set).
func (s *Service) Extinctions(ctx context.Context, q ExtinctionQuery) (map[string][]Extinction, error) {
	if (q.From == nil) != (q.To == nil) {
		return nil, fault.New(fault.Invalid, "query parameters \"from\" and \"to\" go together: give both or neither")
	}
	var repos []*Repository
	if q.Repo != "" {
		r, err := s.Get(ctx, q.Repo)
		if err != nil {
			return nil, err
		}
		repos = []*Repository{r}
	} else {
		all, err := s.List(ctx)
		if err != nil {
			return nil, err
		}
		repos = all
	}
	out := map[string][]Extinction{}
	for _, r := range repos {
		branch := q.Branch
		if branch == "" {
			branch = r.DefaultBranch
		}
		list, err := record.All(ctx, s.table, store.Query{PK: store.CodeRefsPartition(r.ID), SKPrefix: store.CodeExtinctionPrefix(branch)},
			fmt.Sprintf("extinctions of code-reference repository %q", r.Name), decodeExtinction)
		if err != nil {
			return nil, err
		}
		var kept []Extinction
		for _, e := range list {
			if q.ProjKey != "" && e.ProjKey != q.ProjKey || q.FlagKey != "" && e.FlagKey != q.FlagKey {
				continue
			}
			if q.From != nil && (e.Time < *q.From || e.Time > *q.To) {
				continue
			}
			kept = append(kept, e)
		}
		if len(kept) == 0 {
			continue
		}
		sort.SliceStable(kept, func(i, j int) bool {
			if kept[i].Time != kept[j].Time {
				return kept[i].Time > kept[j].Time
			}
			return kept[i].FlagKey < kept[j].FlagKey
		})
		out[r.Name] = kept
	}
	return out, nil
}

// DeleteBranches removes the named branches of a repository (their
// extinctions stay: they are history). Names with no branch are skipped,
// so a task sent twice does the same. Branches go in audited batches.
func (s *Service) DeleteBranches(ctx context.Context, repoName string, names []string) error {
	if len(names) > MaxDeleteBranches {
		return fault.New(fault.Invalid, "at most %d branch names per request, not %d", MaxDeleteBranches, len(names))
	}
	for i, n := range names {
		if err := validBranch(fmt.Sprintf("body[%d]", i), n); err != nil {
			return err
		}
	}
	repo, err := s.Get(ctx, repoName)
	if err != nil {
		return err
	}
	var writes []store.Write
	var gone []string
	flush := func() error {
		if len(gone) == 0 {
			return nil
		}
		_, err := s.log.Commit(ctx, audit.Change{
			Writes: writes, Kind: kind, Resource: Resource(repo.Name), Actions: []string{"updateCodeRefsRepositoryBranches"},
			Name: repo.Name, Href: Href(repo.Name), TitleVerb: fmt.Sprintf("deleted %s of", branchList(gone)),
			Previous: gone,
			Conflict: fmt.Sprintf("a branch of code-reference repository %q was changed by another request; try again", repo.Name),
		})
		writes, gone = nil, nil
		return err
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		b, err := s.branch(ctx, repo, n)
		if err != nil {
			return err
		}
		if b == nil {
			continue
		}
		if len(writes)+1+b.Chunks > store.MaxWrites-2 {
			if err := flush(); err != nil {
				return err
			}
		}
		writes = append(writes, store.Delete(store.CodeBranchKey(repo.ID, n), store.IfVersion(b.Version)))
		for c := 0; c < b.Chunks; c++ {
			writes = append(writes, store.Delete(store.CodeBranchChunkKey(repo.ID, n, c), store.Cond{}))
		}
		gone = append(gone, n)
	}
	return flush()
}

// branchList names branches for an entry's title, the first ten of them.
func branchList(names []string) string {
	if len(names) == 1 {
		return "branch " + names[0]
	}
	if len(names) <= 10 {
		return "branches " + strings.Join(names, ", ")
	}
	return fmt.Sprintf("branches %s and %d more", strings.Join(names[:10], ", "), len(names)-10)
}

// FlagReferences counts, per flag of a project, the code references
// (hunks) on the default branch of every enabled repository: what the
// insights scores read. Flags with no reference are absent.
func (s *Service) FlagReferences(ctx context.Context, projectKey string) (map[string]int, error) {
	repos, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, r := range repos {
		if !r.Enabled {
			continue
		}
		b, err := s.branch(ctx, r, r.DefaultBranch)
		if err != nil {
			return nil, err
		}
		if b == nil {
			continue
		}
		for flag, n := range b.Counts[projectKey] {
			out[flag] += n
		}
	}
	return out, nil
}
