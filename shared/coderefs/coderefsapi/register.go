// Package coderefsapi serves the code-refs group over HTTP: what
// LaunchDarkly's ld-find-code-refs scanner calls (repositories, branch
// uploads, extinctions, branch-delete tasks) and the reads of its results.
package coderefsapi

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/coderefs"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/policy"
)

// New is the code-refs group over a.
func New(a *app.App) app.Group {
	s := Service(a)
	h, n := handlers{s: s}, needs{s: s}
	return app.Group{
		Name: "code-refs",
		Handlers: map[string]api.Handler{
			"getRepositories":  h.getRepositories,
			"postRepository":   h.postRepository,
			"getRepository":    h.getRepository,
			"patchRepository":  h.patchRepository,
			"deleteRepository": h.deleteRepository,
			"getBranches":      h.getBranches,
			"getBranch":        h.getBranch,
			"putBranch":        h.putBranch,
			"deleteBranches":   h.deleteBranches,
			"postExtinction":   h.postExtinction,
			"getExtinctions":   h.getExtinctions,
		},
		Needs: map[string]api.Needs{
			"getRepository":    n.onPath,
			"deleteRepository": n.onPath,
			"getBranches":      n.onPath,
			"getBranch":        n.onPath,
			"putBranch":        n.onPath,
			"deleteBranches":   n.onPath,
			"postExtinction":   n.onPath,
			"postRepository":   n.postRepository,
			"getExtinctions":   n.getExtinctions,
			"patchRepository":  n.patchRepository,
		},
		Answers:  answers,
		Examples: examples(),
	}
}

// answers are the group's success answers, for the OpenAPI document.
var answers = map[string]api.Answer{
	"getRepositories":  {Status: http.StatusOK, Rep: repositoriesRep{}},
	"postRepository":   {Status: http.StatusOK, Rep: repositoryRep{}},
	"getRepository":    {Status: http.StatusOK, Rep: repositoryRep{}},
	"patchRepository":  {Status: http.StatusOK, Rep: repositoryRep{}},
	"deleteRepository": {Status: http.StatusNoContent},
	"getBranches":      {Status: http.StatusOK, Rep: branchesRep{}},
	"getBranch":        {Status: http.StatusOK, Rep: fullBranchRep{}},
	"putBranch":        {Status: http.StatusOK},
	"deleteBranches":   {Status: http.StatusOK},
	"postExtinction":   {Status: http.StatusOK},
	"getExtinctions":   {Status: http.StatusOK, Rep: extinctionsRep{}},
}

// Service returns a code-references service over the app: what the
// handlers use, and the read other groups (insights) use through
// coderefs.Service.FlagReferences. It holds no state (no cache), so each
// group that reads it may make its own.
func Service(a *app.App) *coderefs.Service {
	return coderefs.NewService(a.Table, a.Services.Audit, a.Logger, a.Now)
}

const reposPath = "/api/v2/code-refs/repositories"

type repositoryRep struct {
	Name              string        `json:"name"`
	SourceLink        string        `json:"sourceLink,omitempty"`
	CommitURLTemplate string        `json:"commitUrlTemplate,omitempty"`
	HunkURLTemplate   string        `json:"hunkUrlTemplate,omitempty"`
	Type              string        `json:"type"`
	DefaultBranch     string        `json:"defaultBranch"`
	Enabled           bool          `json:"enabled"`
	Version           int64         `json:"version"`
	Branches          []branchRep   `json:"branches,omitempty"`
	Links             api.Links     `json:"_links"`
	Access            policy.Access `json:"_access"`
}

type branchRep struct {
	Name             string               `json:"name"`
	Head             string               `json:"head"`
	UpdateSequenceID *int64               `json:"updateSequenceId,omitempty"`
	SyncTime         int64                `json:"syncTime"`
	References       []coderefs.Reference `json:"references,omitempty"`
	Links            api.Links            `json:"_links"`
}

// fullBranchRep is one branch read alone: it always shows its
// references, an empty list too.
type fullBranchRep struct {
	branchRep
	References []coderefs.Reference `json:"references"`
}

type repositoriesRep struct {
	Links api.Links       `json:"_links"`
	Items []repositoryRep `json:"items"`
}

type branchesRep struct {
	Links api.Links   `json:"_links"`
	Items []branchRep `json:"items"`
}

type extinctionRep struct {
	Revision string `json:"revision"`
	Message  string `json:"message"`
	Time     int64  `json:"time"`
	ProjKey  string `json:"projKey"`
	FlagKey  string `json:"flagKey"`
}

type extinctionsRep struct {
	Links api.Links                  `json:"_links"`
	Items map[string][]extinctionRep `json:"items"`
}

func newRepositoryRep(r *http.Request, repo *coderefs.Repository) repositoryRep {
	p, _ := identity.From(r.Context())
	return repositoryRep{Name: repo.Name, SourceLink: repo.SourceLink, CommitURLTemplate: repo.CommitURLTemplate,
		HunkURLTemplate: repo.HunkURLTemplate, Type: repo.Type, DefaultBranch: repo.DefaultBranch, Enabled: repo.Enabled,
		Version: repo.Version, Links: api.Links{"self": api.JSONLink(coderefs.Href(repo.Name)), "branches": api.JSONLink(coderefs.Href(repo.Name) + "/branches")},
		Access: p.Access(policy.NewResource("code-reference-repository", repo.Name), coderefs.Actions)}
}

func newBranchRep(repo string, b *coderefs.Branch) branchRep {
	return branchRep{Name: b.Name, Head: b.Head, UpdateSequenceID: b.UpdateSequenceID, SyncTime: b.SyncTime,
		References: b.References, Links: api.Self(coderefs.BranchHref(repo, b.Name))}
}

// visible keeps the repositories the caller may read: a list passes the
// check on code-reference-repository/*, and a statement may still deny one.
func visible(r *http.Request, list []*coderefs.Repository) []*coderefs.Repository {
	out := list[:0:0]
	for _, repo := range list {
		if mayView(r, repo.Name) {
			out = append(out, repo)
		}
	}
	return out
}

// mayView says whether the caller may read the repository named name.
func mayView(r *http.Request, name string) bool {
	return api.MayView(r, policy.NewResource("code-reference-repository", name), identity.ViewAction)
}

// present is "set to any value", as the reference words withBranches.
func present(r *http.Request, name string) bool { return r.URL.Query().Has(name) }

// handlers serve the group's operations on the code-references service.
type handlers struct {
	s *coderefs.Service
}

// getRepositories lists the repositories the caller may read, with their
// branches when asked, and the default branch's references when asked.
func (h handlers) getRepositories(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	withRefs := present(r, "withReferencesForDefaultBranch")
	withBranches := withRefs || present(r, "withBranches")
	repos, err := h.s.List(r.Context())
	if err != nil {
		return err
	}
	repos = visible(r, repos)
	out := repositoriesRep{Links: api.Self(reposPath), Items: make([]repositoryRep, 0, len(repos))}
	for _, repo := range repos {
		rep := newRepositoryRep(r, repo)
		if withBranches {
			branches, err := h.s.Branches(r.Context(), repo)
			if err != nil {
				return err
			}
			for _, b := range branches {
				if withRefs && b.Name == repo.DefaultBranch {
					full, err := h.s.WithReferences(r.Context(), repo, b, q.Get("projKey"), q.Get("flagKey"))
					if fault.Is(err, fault.NotFound) {
						continue // deleted since the list was read
					}
					if err != nil {
						return err
					}
					b = full
				}
				rep.Branches = append(rep.Branches, newBranchRep(repo.Name, b))
			}
		}
		out.Items = append(out.Items, rep)
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h handlers) postRepository(w http.ResponseWriter, r *http.Request) error {
	var in coderefs.RepositoryInput
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	repo, err := h.s.Create(r.Context(), in)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newRepositoryRep(r, repo))
	return nil
}

func (h handlers) getRepository(w http.ResponseWriter, r *http.Request) error {
	repo, err := h.s.Get(r.Context(), r.PathValue("repo"))
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newRepositoryRep(r, repo))
	return nil
}

func (h handlers) patchRepository(w http.ResponseWriter, r *http.Request) error {
	body, err := api.ReadBody(w, r)
	if err != nil {
		return err
	}
	e, err := coderefs.ParseEdit(body)
	if err != nil {
		return err
	}
	repo, err := h.s.Patch(r.Context(), r.PathValue("repo"), e)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newRepositoryRep(r, repo))
	return nil
}

func (h handlers) deleteRepository(w http.ResponseWriter, r *http.Request) error {
	if err := h.s.Delete(r.Context(), r.PathValue("repo")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h handlers) getBranches(w http.ResponseWriter, r *http.Request) error {
	repo, err := h.s.Get(r.Context(), r.PathValue("repo"))
	if err != nil {
		return err
	}
	list, err := h.s.Branches(r.Context(), repo)
	if err != nil {
		return err
	}
	out := branchesRep{Links: api.Self(coderefs.Href(repo.Name) + "/branches"), Items: make([]branchRep, 0, len(list))}
	for _, b := range list {
		out.Items = append(out.Items, newBranchRep(repo.Name, b))
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h handlers) getBranch(w http.ResponseWriter, r *http.Request) error {
	repo, err := h.s.Get(r.Context(), r.PathValue("repo"))
	if err != nil {
		return err
	}
	q := r.URL.Query()
	b, err := h.s.Branch(r.Context(), repo, r.PathValue("branch"), q.Get("projKey"), q.Get("flagKey"))
	if err != nil {
		return err
	}
	rep := fullBranchRep{branchRep: newBranchRep(repo.Name, b), References: b.References}
	if rep.References == nil {
		rep.References = []coderefs.Reference{}
	}
	api.WriteJSON(w, http.StatusOK, rep)
	return nil
}

// putBranch is the scanner's upload of one branch's references.
func (h handlers) putBranch(w http.ResponseWriter, r *http.Request) error {
	var in coderefs.BranchInput
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	if _, _, err := h.s.Upload(r.Context(), r.PathValue("repo"), r.PathValue("branch"), in); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// deleteBranches is the scanner's task removing the branches it no
// longer finds, named in the body.
func (h handlers) deleteBranches(w http.ResponseWriter, r *http.Request) error {
	var names []string
	if err := api.Decode(w, r, &names); err != nil {
		return err
	}
	if err := h.s.DeleteBranches(r.Context(), r.PathValue("repo"), names); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (h handlers) postExtinction(w http.ResponseWriter, r *http.Request) error {
	var in []coderefs.ExtinctionInput
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	if err := h.s.PostExtinctions(r.Context(), r.PathValue("repo"), r.PathValue("branch"), in); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// getExtinctions reads extinctions by repository, leaving out the
// repositories the caller may not read.
func (h handlers) getExtinctions(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	eq := coderefs.ExtinctionQuery{Repo: q.Get("repoName"), Branch: q.Get("branchName"), ProjKey: q.Get("projKey"), FlagKey: q.Get("flagKey")}
	for name, dst := range map[string]**int64{"from": &eq.From, "to": &eq.To} {
		if raw := q.Get(name); raw != "" {
			v, err := strconv.ParseInt(raw, 10, 64)
			if err != nil {
				return fault.New(fault.Invalid, "query parameter %q must be Unix milliseconds, not %q", name, raw)
			}
			*dst = &v
		}
	}
	found, err := h.s.Extinctions(r.Context(), eq)
	if err != nil {
		return err
	}
	out := extinctionsRep{Links: api.Self("/api/v2/code-refs/extinctions"), Items: map[string][]extinctionRep{}}
	for repo, list := range found {
		if !mayView(r, repo) {
			continue
		}
		reps := make([]extinctionRep, len(list))
		for i, e := range list {
			reps[i] = extinctionRep{Revision: e.Revision, Message: e.Message, Time: e.Time, ProjKey: e.ProjKey, FlagKey: e.FlagKey}
		}
		out.Items[repo] = reps
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

// needs decide every right on the repository as it is named where it is
// stored. Names are case-insensitive, and statements match case by case:
// without this, a path naming "SECRET" would escape a statement denying
// "code-reference-repository/secret". A create needs its right on the name
// it gives; a patch needs the action of each field it changes.
type needs struct {
	s *coderefs.Service
}

// on is the repository named in the request, as stored (as named when
// there is none: the handler then answers the 404).
func (n needs) on(r *http.Request, name string) (*policy.Resource, error) {
	if repo, err := n.s.Get(r.Context(), name); err == nil {
		name = repo.Name
	} else if !fault.Is(err, fault.NotFound) {
		return nil, err
	}
	res := policy.NewResource("code-reference-repository", name)
	return &res, nil
}

// onPath needs the operation's right on the repository of the path.
func (n needs) onPath(r *http.Request, _ []byte) ([]api.Need, error) {
	res, err := n.on(r, r.PathValue("repo"))
	if err != nil {
		return nil, err
	}
	return []api.Need{{On: res}}, nil
}

func (n needs) postRepository(r *http.Request, body []byte) ([]api.Need, error) {
	var in struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(body, &in) != nil || in.Name == "" {
		return []api.Need{{}}, nil // the handler answers the 400
	}
	res := policy.NewResource("code-reference-repository", in.Name)
	return []api.Need{{On: &res}}, nil
}

// getExtinctions: extinctions of one named repository need the right on
// it, so a token held to one repository reads them.
func (n needs) getExtinctions(r *http.Request, _ []byte) ([]api.Need, error) {
	name := r.URL.Query().Get("repoName")
	if name == "" {
		return []api.Need{{}}, nil
	}
	res, err := n.on(r, name)
	if err != nil {
		return nil, err
	}
	return []api.Need{{On: res}}, nil
}

func (n needs) patchRepository(r *http.Request, body []byte) ([]api.Need, error) {
	res, err := n.on(r, r.PathValue("repo"))
	if err != nil {
		return nil, err
	}
	// A body that does not parse, or a patch of test operations only
	// (which changes nothing but would read the repository), needs the
	// operation's own right; the handler answers the 400.
	out := []api.Need{{On: res}}
	e, err := coderefs.ParseEdit(body)
	if err != nil || len(e.Actions) == 0 {
		return out, nil
	}
	out = out[:0]
	for _, a := range e.Actions {
		out = append(out, api.Need{Action: a, On: res})
	}
	return out, nil
}
