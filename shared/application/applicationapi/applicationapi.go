// Package applicationapi serves the applications group over HTTP (beta):
// the applications and versions SDK events add, edited through the API.
package applicationapi

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/application"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/listing"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/reps"
)

// New is the applications group over a.
func New(a *app.App) app.Group {
	s := a.Services
	h := handlers{apps: s.Applications, flags: s.Flags}
	return app.Group{
		Name:     "applications",
		Examples: examples(),
		Handlers: map[string]api.Handler{
			"getApplications":          h.getApplications,
			"getApplication":           h.getApplication,
			"patchApplication":         h.patchApplication,
			"deleteApplication":        h.deleteApplication,
			"getApplicationVersions":   h.getApplicationVersions,
			"patchApplicationVersion":  h.patchApplicationVersion,
			"deleteApplicationVersion": h.deleteApplicationVersion,
		},
		Needs: map[string]api.Needs{
			"patchApplication":        api.PatchNeeds("an application", application.PatchActions),
			"patchApplicationVersion": api.PatchNeeds("an application version", application.VersionPatchActions),
		},
		Answers: map[string]api.Answer{
			"getApplications":          {Status: http.StatusOK, Rep: applicationsRep{}},
			"getApplication":           {Status: http.StatusOK, Rep: applicationRep{}},
			"patchApplication":         {Status: http.StatusOK, Rep: applicationRep{}},
			"deleteApplication":        {Status: http.StatusNoContent},
			"getApplicationVersions":   {Status: http.StatusOK, Rep: applicationVersionsRep{}},
			"patchApplicationVersion":  {Status: http.StatusOK, Rep: applicationVersionRep{}},
			"deleteApplicationVersion": {Status: http.StatusNoContent},
		},
	}
}

// Application pages (the reference's list defaults).
const (
	applicationsDefaultLimit = 10
	applicationsMaxLimit     = 100
)

type applicationRep struct {
	*application.Application
	ItemVersion int64               `json:"_version"`
	Links       api.Links           `json:"_links"`
	Access      policy.Access       `json:"_access"`
	Flags       *applicationFlagSet `json:"flags,omitempty"`
}

type applicationFlagSet struct {
	Items      []applicationFlag `json:"items"`
	TotalCount int               `json:"totalCount"`
	Links      api.Links         `json:"_links"`
}

type applicationFlag struct {
	Name  string    `json:"name"`
	Key   string    `json:"key"`
	Links api.Links `json:"_links"`
	Site  api.Link  `json:"_site"`
}

type applicationsRep struct {
	Links      api.Links        `json:"_links"`
	Items      []applicationRep `json:"items"`
	TotalCount int64            `json:"totalCount"`
}

type applicationVersionRep struct {
	*application.Version
	ItemVersion int64         `json:"_version"`
	Links       api.Links     `json:"_links"`
	Access      policy.Access `json:"_access"`
}

type applicationVersionsRep struct {
	Links      api.Links               `json:"_links"`
	Items      []applicationVersionRep `json:"items"`
	TotalCount int64                   `json:"totalCount"`
}

func newApplicationRep(r *http.Request, a *application.Application) applicationRep {
	return applicationRep{Application: a, ItemVersion: a.Version, Links: api.Links{
		"self": api.JSONLink(application.Href(a.Key)), "versions": api.JSONLink(application.Href(a.Key) + "/versions"),
	}, Access: reps.Access(r, policy.NewResource("application", a.Key), application.Actions)}
}

func newVersionRep(r *http.Request, appKey string, v *application.Version) applicationVersionRep {
	return applicationVersionRep{Version: v, ItemVersion: v.Version,
		Links:  api.Links{"self": api.JSONLink(application.Href(appKey) + "/versions/" + v.Key), "parent": api.JSONLink(application.Href(appKey))},
		Access: reps.Access(r, policy.NewResource("application", appKey), application.VersionActions)}
}

// handlers serve the group's operations: applications, and the flags they
// evaluated, named as the flags are.
type handlers struct {
	apps  *application.Service
	flags *flag.Service
}

// expandFlags reads expand: only "flags" is known.
func expandFlags(r *http.Request) (bool, error) {
	expand, err := api.Expand(r.URL.Query(), "flags")
	return expand["flags"], err
}

func (h handlers) applicationFlags(r *http.Request, key string) (*applicationFlagSet, error) {
	flags, err := h.apps.Flags(r.Context(), key)
	if err != nil {
		return nil, err
	}
	set := &applicationFlagSet{Items: []applicationFlag{}, TotalCount: len(flags), Links: api.Self(application.Href(key) + "?expand=flags")}
	for _, f := range flags {
		name := f.FlagKey
		if loaded, err := h.flags.Load(r.Context(), f.ProjectKey, f.FlagKey); err == nil {
			name = loaded.Name
		} else if !fault.Is(err, fault.NotFound) {
			return nil, err
		}
		set.Items = append(set.Items, applicationFlag{Name: name, Key: f.FlagKey,
			Links: api.Self("/api/v2/flags/" + f.ProjectKey + "/" + f.FlagKey),
			Site:  api.Link{Href: "/" + f.ProjectKey + "/" + f.EnvKey + "/features/" + f.FlagKey, Type: "text/html"}})
	}
	return set, nil
}

// applicationFilter keeps the applications matching the filter's key,
// name (a substring, ignoring case), kind and autoAdded.
func applicationFilter(raw string) (func(*application.Application) bool, error) {
	f, err := listing.ParseFilter(raw, "key", "name", "kind", "autoAdded")
	if err != nil {
		return nil, err
	}
	return listing.All(
		listing.Equals(f, "key", func(a *application.Application) string { return a.Key }),
		listing.Text(f, "name", func(a *application.Application) []string { return []string{a.Name} }),
		listing.Equals(f, "kind", func(a *application.Application) string { return a.Kind }),
		listing.Equals(f, "autoAdded", func(a *application.Application) string { return strconv.FormatBool(a.AutoAdded) }),
	), nil
}

// sortApplications orders by key (default), name or creationDate, each
// descending after "-", later fields breaking ties.
func sortApplications(all []*application.Application, raw string) error {
	order, err := listing.ParseSort(raw, "key", "name", "creationDate")
	if err != nil {
		return err
	}
	if len(order) == 0 {
		order = []listing.SortKey{{Field: "key"}}
	}
	listing.Sort(all, order, map[string]func(a, b *application.Application) int{
		"key":          func(a, b *application.Application) int { return strings.Compare(a.Key, b.Key) },
		"name":         func(a, b *application.Application) int { return strings.Compare(a.Name, b.Name) },
		"creationDate": func(a, b *application.Application) int { return cmp.Compare(a.CreationDate, b.CreationDate) },
	})
	return nil
}

func (h handlers) getApplications(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	offset, limit, err := api.OffsetParams(q, applicationsDefaultLimit, applicationsMaxLimit)
	if err != nil {
		return err
	}
	expand, err := expandFlags(r)
	if err != nil {
		return err
	}
	keep, err := applicationFilter(q.Get("filter"))
	if err != nil {
		return err
	}
	all, err := h.apps.List(r.Context())
	if err != nil {
		return err
	}
	all = slices.DeleteFunc(all, func(a *application.Application) bool { return !keep(a) })
	if err := sortApplications(all, q.Get("sort")); err != nil {
		return err
	}
	total := int64(len(all))
	out := applicationsRep{Items: []applicationRep{}, TotalCount: total, Links: api.OffsetLinks("/api/v2/applications", q, offset, limit, total)}
	for _, a := range listing.Window(all, offset, limit) {
		rep := newApplicationRep(r, a)
		if expand {
			if rep.Flags, err = h.applicationFlags(r, a.Key); err != nil {
				return err
			}
		}
		out.Items = append(out.Items, rep)
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h handlers) getApplication(w http.ResponseWriter, r *http.Request) error {
	expand, err := expandFlags(r)
	if err != nil {
		return err
	}
	a, err := h.apps.Get(r.Context(), r.PathValue("applicationKey"))
	if err != nil {
		return err
	}
	rep := newApplicationRep(r, a)
	if expand {
		if rep.Flags, err = h.applicationFlags(r, a.Key); err != nil {
			return err
		}
	}
	api.WriteJSON(w, http.StatusOK, rep)
	return nil
}

func (h handlers) patchApplication(w http.ResponseWriter, r *http.Request) error {
	p, err := api.ReadJSONPatch(w, r, "an application")
	if err != nil {
		return err
	}
	a, err := h.apps.Patch(r.Context(), r.PathValue("applicationKey"), p)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newApplicationRep(r, a))
	return nil
}

func (h handlers) deleteApplication(w http.ResponseWriter, r *http.Request) error {
	if err := h.apps.Delete(r.Context(), r.PathValue("applicationKey")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h handlers) getApplicationVersions(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	offset, limit, err := api.OffsetParams(q, 50, applicationsMaxLimit)
	if err != nil {
		return err
	}
	key := r.PathValue("applicationKey")
	all, err := h.apps.Versions(r.Context(), key)
	if err != nil {
		return err
	}
	total := int64(len(all))
	out := applicationVersionsRep{Items: []applicationVersionRep{}, TotalCount: total, Links: api.OffsetLinks(application.Href(key)+"/versions", q, offset, limit, total)}
	for _, v := range listing.Window(all, offset, limit) {
		out.Items = append(out.Items, newVersionRep(r, key, v))
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h handlers) patchApplicationVersion(w http.ResponseWriter, r *http.Request) error {
	p, err := api.ReadJSONPatch(w, r, "an application version")
	if err != nil {
		return err
	}
	key := r.PathValue("applicationKey")
	v, err := h.apps.PatchVersion(r.Context(), key, r.PathValue("versionKey"), p)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newVersionRep(r, key, v))
	return nil
}

func (h handlers) deleteApplicationVersion(w http.ResponseWriter, r *http.Request) error {
	if err := h.apps.DeleteVersion(r.Context(), r.PathValue("applicationKey"), r.PathValue("versionKey")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
