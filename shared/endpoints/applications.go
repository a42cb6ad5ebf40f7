package endpoints

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/application"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/reps"
)

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

type applicationVersionRep struct {
	*application.Version
	ItemVersion int64         `json:"_version"`
	Links       api.Links     `json:"_links"`
	Access      policy.Access `json:"_access"`
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

// expandFlags reads expand: only "flags" is known.
func expandFlags(q url.Values) (bool, error) {
	want := false
	for _, e := range strings.Split(q.Get("expand"), ",") {
		switch strings.TrimSpace(e) {
		case "":
		case "flags":
			want = true
		default:
			return false, fault.New(fault.Invalid, "expand %q is not supported: only flags is", e)
		}
	}
	return want, nil
}

func applicationFlags(s app.Services, r *http.Request, key string) (*applicationFlagSet, error) {
	flags, err := s.Applications.Flags(r.Context(), key)
	if err != nil {
		return nil, err
	}
	set := &applicationFlagSet{Items: []applicationFlag{}, TotalCount: len(flags), Links: api.Self(application.Href(key) + "?expand=flags")}
	for _, f := range flags {
		name := f.FlagKey
		if loaded, err := s.Flags.Load(r.Context(), f.ProjectKey, f.FlagKey); err == nil {
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

// filterApplications keeps those matching filter terms key:, name: (substring), kind:, autoAdded:.
func filterApplications(all []*application.Application, raw string) ([]*application.Application, error) {
	type term struct{ field, value string }
	var terms []term
	for _, t := range strings.Split(raw, ",") {
		if strings.TrimSpace(t) == "" {
			continue
		}
		f, v, ok := strings.Cut(strings.TrimSpace(t), ":")
		if !ok || !slices.Contains([]string{"key", "name", "kind", "autoAdded"}, f) {
			return nil, fault.New(fault.Invalid, "filter term %q is not supported: use key:, name:, kind: or autoAdded:", t)
		}
		terms = append(terms, term{f, v})
	}
	return slices.DeleteFunc(all, func(a *application.Application) bool {
		for _, t := range terms {
			switch t.field {
			case "key":
				if a.Key != t.value {
					return true
				}
			case "name":
				if !strings.Contains(strings.ToLower(a.Name), strings.ToLower(t.value)) {
					return true
				}
			case "kind":
				if a.Kind != t.value {
					return true
				}
			case "autoAdded":
				if strconv.FormatBool(a.AutoAdded) != t.value {
					return true
				}
			}
		}
		return false
	}), nil
}

func applicationHandlers(s app.Services) map[string]api.Handler {
	return map[string]api.Handler{
		"getApplications": func(w http.ResponseWriter, r *http.Request) error {
			q := r.URL.Query()
			offset, limit, err := api.OffsetParams(q, applicationsDefaultLimit, applicationsMaxLimit)
			if err != nil {
				return err
			}
			expand, err := expandFlags(q)
			if err != nil {
				return err
			}
			all, err := s.Applications.List(r.Context())
			if err != nil {
				return err
			}
			if all, err = filterApplications(all, q.Get("filter")); err != nil {
				return err
			}
			if err := sortApplications(all, q.Get("sort")); err != nil {
				return err
			}
			total := int64(len(all))
			page := all[min(offset, total):min(offset+limit, total)]
			items := make([]applicationRep, len(page))
			for i, a := range page {
				items[i] = newApplicationRep(r, a)
				if expand {
					if items[i].Flags, err = applicationFlags(s, r, a.Key); err != nil {
						return err
					}
				}
			}
			api.WriteJSON(w, http.StatusOK, map[string]any{"items": items, "totalCount": total,
				"_links": api.OffsetLinks("/api/v2/applications", q, offset, limit, total)})
			return nil
		},
		"getApplication": func(w http.ResponseWriter, r *http.Request) error {
			expand, err := expandFlags(r.URL.Query())
			if err != nil {
				return err
			}
			a, err := s.Applications.Get(r.Context(), r.PathValue("applicationKey"))
			if err != nil {
				return err
			}
			rep := newApplicationRep(r, a)
			if expand {
				if rep.Flags, err = applicationFlags(s, r, a.Key); err != nil {
					return err
				}
			}
			api.WriteJSON(w, http.StatusOK, rep)
			return nil
		},
		"patchApplication": func(w http.ResponseWriter, r *http.Request) error {
			p, err := api.ReadJSONPatch(w, r, "an application")
			if err != nil {
				return err
			}
			a, err := s.Applications.Patch(r.Context(), r.PathValue("applicationKey"), p)
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusOK, newApplicationRep(r, a))
			return nil
		},
		"deleteApplication": func(w http.ResponseWriter, r *http.Request) error {
			if err := s.Applications.Delete(r.Context(), r.PathValue("applicationKey")); err != nil {
				return err
			}
			w.WriteHeader(http.StatusNoContent)
			return nil
		},
		"getApplicationVersions": func(w http.ResponseWriter, r *http.Request) error {
			q := r.URL.Query()
			offset, limit, err := api.OffsetParams(q, 50, applicationsMaxLimit)
			if err != nil {
				return err
			}
			key := r.PathValue("applicationKey")
			all, err := s.Applications.Versions(r.Context(), key)
			if err != nil {
				return err
			}
			total := int64(len(all))
			page := all[min(offset, total):min(offset+limit, total)]
			items := make([]applicationVersionRep, len(page))
			for i, v := range page {
				items[i] = newVersionRep(r, key, v)
			}
			api.WriteJSON(w, http.StatusOK, map[string]any{"items": items, "totalCount": total,
				"_links": api.OffsetLinks(application.Href(key)+"/versions", q, offset, limit, total)})
			return nil
		},
		"patchApplicationVersion": func(w http.ResponseWriter, r *http.Request) error {
			p, err := api.ReadJSONPatch(w, r, "an application version")
			if err != nil {
				return err
			}
			key := r.PathValue("applicationKey")
			v, err := s.Applications.PatchVersion(r.Context(), key, r.PathValue("versionKey"), p)
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusOK, newVersionRep(r, key, v))
			return nil
		},
		"deleteApplicationVersion": func(w http.ResponseWriter, r *http.Request) error {
			if err := s.Applications.DeleteVersion(r.Context(), r.PathValue("applicationKey"), r.PathValue("versionKey")); err != nil {
				return err
			}
			w.WriteHeader(http.StatusNoContent)
			return nil
		},
	}
}

// sortApplications orders by key (default), name or creationDate; "-" descends.
func sortApplications(all []*application.Application, raw string) error {
	desc := strings.HasPrefix(raw, "-")
	field := strings.TrimPrefix(raw, "-")
	var cmp func(a, b *application.Application) int
	switch field {
	case "", "key":
		cmp = func(a, b *application.Application) int { return strings.Compare(a.Key, b.Key) }
	case "name":
		cmp = func(a, b *application.Application) int { return strings.Compare(a.Name, b.Name) }
	case "creationDate":
		cmp = func(a, b *application.Application) int { return int(a.CreationDate - b.CreationDate) }
	default:
		return fault.New(fault.Invalid, "sort %q is not supported: use key, name or creationDate, with - to descend", raw)
	}
	slices.SortStableFunc(all, func(a, b *application.Application) int {
		if desc {
			return cmp(b, a)
		}
		return cmp(a, b)
	})
	return nil
}
