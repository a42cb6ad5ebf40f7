package endpoints

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/reps"
	"github.com/flagplane/flagplane/shared/sdkcontext"
)

// Context page sizes (spec part 8).
const (
	contextsDefaultLimit = 20
	contextsMaxLimit     = 50
)

// contextInstanceActions are the actions `_access` reports on a context instance.
var contextInstanceActions = []string{"deleteContextInstance"}

func contextHandlers(s app.Services) map[string]api.Handler {
	return map[string]api.Handler{
		"getContextKindsByProjectKey": getContextKinds(s),
		"putContextKind":              putContextKind(s),
		"getContexts":                 getContexts(s),
		"searchContexts":              searchContexts(s, false),
		"searchContextInstances":      searchContexts(s, true),
		"getContextInstances":         getContextInstances(s),
		"deleteContextInstances":      deleteContextInstance(s),
		"getContextAttributeNames":    getContextAttributeNames(s),
		"getContextAttributeValues":   getContextAttributeValues(s),
	}
}

type contextKindRep struct {
	sdkcontext.Kind
	Links api.Links `json:"_links"`
}

func kindRep(projectKey string, k sdkcontext.Kind) contextKindRep {
	return contextKindRep{Kind: k, Links: api.Links{
		"self":   api.JSONLink("/api/v2/projects/" + projectKey + "/context-kinds/" + k.Key),
		"parent": api.JSONLink("/api/v2/projects/" + projectKey),
	}}
}

func getContextKinds(s app.Services) api.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		p := r.PathValue("projectKey")
		kinds, err := s.Contexts.Kinds(r.Context(), p)
		if err != nil {
			return err
		}
		items := make([]contextKindRep, len(kinds))
		for i, k := range kinds {
			items[i] = kindRep(p, k)
		}
		api.WriteJSON(w, http.StatusOK, map[string]any{"items": items, "_links": api.Self("/api/v2/projects/" + p + "/context-kinds")})
		return nil
	}
}

func putContextKind(s app.Services) api.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		var in sdkcontext.KindInput
		if err := api.Decode(w, r, &in); err != nil {
			return err
		}
		p, key := r.PathValue("projectKey"), r.PathValue("key")
		_, created, err := s.Contexts.PutKind(r.Context(), p, key, in)
		if err != nil {
			return err
		}
		status := "updated"
		if created {
			status = "created"
		}
		api.WriteJSON(w, http.StatusOK, map[string]any{"status": status,
			"_links": api.Self("/api/v2/projects/" + p + "/context-kinds/" + key)})
		return nil
	}
}

// contextRecord is one context instance as the contexts operations show it.
type contextRecord struct {
	ID                 string        `json:"id,omitempty"`
	LastSeen           string        `json:"lastSeen"`
	ApplicationID      string        `json:"applicationId,omitempty"`
	AnonymousKinds     []string      `json:"anonymousKinds,omitempty"`
	Context            string        `json:"context"`
	Links              api.Links     `json:"_links"`
	Access             policy.Access `json:"_access"`
	AssociatedContexts *int          `json:"associatedContexts,omitempty"`
}

// lastSeenFormat is ISO 8601 with fractional seconds, in UTC.
const lastSeenFormat = "2006-01-02T15:04:05.000Z"

func recordOf(r *http.Request, env *environment.Environment, in *sdkcontext.Instance, asInstance bool) contextRecord {
	envHref := env.Href()
	rec := contextRecord{
		LastSeen: time.UnixMilli(in.LastSeen).UTC().Format(lastSeenFormat), ApplicationID: in.ApplicationID,
		Context: in.Context,
		Links: api.Links{
			"self":   api.JSONLink(envHref + "/context-instances/" + in.ID),
			"parent": api.JSONLink(envHref),
			"site":   {Href: "/" + env.ProjectKey + "/" + env.Key + "/context-instances/" + in.ID, Type: "text/html"},
		},
		Access: reps.Access(r, policy.NewResource("proj", env.ProjectKey).Child("env", env.Key, env.Tags...), contextInstanceActions),
	}
	if asInstance {
		rec.ID, rec.AnonymousKinds = in.ID, in.AnonymousKinds
	} else {
		n := in.AssociatedContexts()
		rec.AssociatedContexts = &n
	}
	return rec
}

// contextQuery is the paging and filter of a contexts list or search.
type contextQuery struct {
	limit  int
	cursor string
	filter sdkcontext.Filter
	total  bool
}

// readContextQuery reads limit, continuationToken, filter and
// includeTotalCount; sort is refused (spec section 7). body holds a
// search's body fields, which may not repeat the query's.
func readContextQuery(q url.Values, body *searchBody) (contextQuery, error) {
	if q.Has("sort") || (body != nil && body.Sort != nil) {
		return contextQuery{}, fault.New(fault.Invalid, "sort is not supported on contexts")
	}
	if body != nil {
		both := (body.Filter != nil && q.Has("filter")) || (body.Limit != nil && q.Has("limit")) ||
			(body.ContinuationToken != nil && q.Has("continuationToken"))
		if both {
			return contextQuery{}, fault.New(fault.Invalid, "send the search's filters either as query parameters or in the body, not both")
		}
		if body.Filter != nil {
			q.Set("filter", *body.Filter)
		}
		if body.Limit != nil {
			q.Set("limit", jsonInt(*body.Limit))
		}
		if body.ContinuationToken != nil {
			q.Set("continuationToken", *body.ContinuationToken)
		}
	}
	limit, err := api.IntParam(q, "limit", contextsDefaultLimit, 1, contextsMaxLimit)
	if err != nil {
		return contextQuery{}, err
	}
	total, err := api.BoolParam(q, "includeTotalCount", true)
	if err != nil {
		return contextQuery{}, err
	}
	f, err := parseContextFilter(q.Get("filter"), body != nil)
	if err != nil {
		return contextQuery{}, err
	}
	return contextQuery{limit: int(limit), cursor: q.Get("continuationToken"), filter: f, total: total}, nil
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }

// parseContextFilter reads "applicationId:<id>" or "applicationId equals <id>"
// terms, comma-separated; searches also take "kind".
func parseContextFilter(raw string, search bool) (sdkcontext.Filter, error) {
	var f sdkcontext.Filter
	if strings.TrimSpace(raw) == "" {
		return f, nil
	}
	for _, term := range strings.Split(raw, ",") {
		term = strings.TrimSpace(term)
		name, value, ok := strings.Cut(term, ":")
		if fields := strings.Fields(term); !ok && len(fields) == 3 && fields[1] == "equals" {
			name, value, ok = fields[0], strings.Trim(fields[2], `"`), true
		}
		if !ok || value == "" {
			return f, fault.New(fault.Invalid, "filter term %q must be <field>:<value>", term)
		}
		switch {
		case name == "applicationId":
			f.ApplicationID = value
		case name == "kind" && search:
			f.Kind = value
		default:
			return f, fault.New(fault.Invalid, "filter field %q is not supported: only applicationId is", name)
		}
	}
	return f, nil
}

type searchBody struct {
	Filter            *string `json:"filter"`
	Sort              *string `json:"sort"`
	Limit             *int64  `json:"limit"`
	ContinuationToken *string `json:"continuationToken"`
}

func writeContexts(w http.ResponseWriter, r *http.Request, env *environment.Environment, page sdkcontext.Page, q contextQuery, asInstances bool, selfPath string) {
	items := make([]contextRecord, len(page.Items))
	for i, in := range page.Items {
		items[i] = recordOf(r, env, in, asInstances)
	}
	links := api.Links{"self": api.JSONLink(selfPath)}
	body := map[string]any{"items": items, "_environmentId": env.ID, "_links": links}
	if page.Cursor != "" {
		body["continuationToken"] = page.Cursor
		v := r.URL.Query()
		v.Del("continuationToken")
		v.Set("continuationToken", page.Cursor)
		v.Set("limit", jsonInt(int64(q.limit)))
		links["next"] = api.JSONLink(r.URL.Path + "?" + v.Encode())
	}
	if q.total {
		body["totalCount"] = page.Total
	}
	api.WriteJSON(w, http.StatusOK, body)
}

func getContexts(s app.Services) api.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		q, err := readContextQuery(r.URL.Query(), nil)
		if err != nil {
			return err
		}
		env, err := s.Contexts.Environment(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"))
		if err != nil {
			return err
		}
		page, err := s.Contexts.ByContext(r.Context(), env.ID, r.PathValue("kind"), r.PathValue("key"), q.filter, q.limit, q.cursor)
		if err != nil {
			return err
		}
		writeContexts(w, r, env, page, q, false, r.URL.RequestURI())
		return nil
	}
}

func searchContexts(s app.Services, asInstances bool) api.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		var body searchBody
		if r.ContentLength != 0 {
			if err := api.Decode(w, r, &body); err != nil {
				return err
			}
		}
		q, err := readContextQuery(r.URL.Query(), &body)
		if err != nil {
			return err
		}
		env, err := s.Contexts.Environment(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"))
		if err != nil {
			return err
		}
		page, err := s.Contexts.Search(r.Context(), env.ID, q.filter, q.limit, q.cursor, q.total)
		if err != nil {
			return err
		}
		writeContexts(w, r, env, page, q, asInstances, r.URL.RequestURI())
		return nil
	}
}

func getContextInstances(s app.Services) api.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		q, err := readContextQuery(r.URL.Query(), nil)
		if err != nil {
			return err
		}
		env, err := s.Contexts.Environment(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"))
		if err != nil {
			return err
		}
		in, err := s.Contexts.Instance(r.Context(), env.ID, r.PathValue("id"))
		if err != nil {
			return err
		}
		page := sdkcontext.Page{Total: 1}
		if q.filter.ApplicationID == "" || q.filter.ApplicationID == in.ApplicationID {
			page.Items = []*sdkcontext.Instance{in}
		} else {
			page.Total = 0
		}
		writeContexts(w, r, env, page, q, true, r.URL.RequestURI())
		return nil
	}
}

func deleteContextInstance(s app.Services) api.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		env, err := s.Contexts.Environment(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"))
		if err != nil {
			return err
		}
		if err := s.Contexts.DeleteInstance(r.Context(), env, r.PathValue("id")); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

// attributeQuery reads the attribute operations' filter (kind:<kind>, or
// name:<text> on names) and limit.
func attributeQuery(q url.Values) (kind, name string, limit int, err error) {
	n, err := api.IntParam(q, "limit", 100, 1, 100)
	if err != nil {
		return "", "", 0, err
	}
	for _, term := range strings.Split(q.Get("filter"), ",") {
		if strings.TrimSpace(term) == "" {
			continue
		}
		field, value, ok := strings.Cut(strings.TrimSpace(term), ":")
		switch {
		case ok && field == "kind":
			kind = value
		case ok && field == "name":
			name = value
		default:
			return "", "", 0, fault.New(fault.Invalid, "filter term %q is not supported: use kind:<kind> or name:<text>", term)
		}
	}
	return kind, name, int(n), nil
}

func getContextAttributeNames(s app.Services) api.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		kind, name, limit, err := attributeQuery(r.URL.Query())
		if err != nil {
			return err
		}
		env, err := s.Contexts.Environment(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"))
		if err != nil {
			return err
		}
		names, err := s.Contexts.AttrNames(r.Context(), env.ID, kind)
		if err != nil {
			return err
		}
		type nameRep struct {
			Name     string `json:"name"`
			Weight   int64  `json:"weight"`
			Redacted bool   `json:"redacted"`
		}
		byKind := map[string][]nameRep{}
		var order []string
		for _, n := range names {
			if name != "" && !strings.Contains(strings.ToLower(n.Name), strings.ToLower(name)) {
				continue
			}
			if _, ok := byKind[n.Kind]; !ok {
				order = append(order, n.Kind)
			}
			if len(byKind[n.Kind]) < limit {
				byKind[n.Kind] = append(byKind[n.Kind], nameRep{Name: n.Name, Weight: n.Weight})
			}
		}
		items := make([]map[string]any, 0, len(order))
		for _, k := range order {
			items = append(items, map[string]any{"kind": k, "names": byKind[k]})
		}
		api.WriteJSON(w, http.StatusOK, map[string]any{"items": items})
		return nil
	}
}

func getContextAttributeValues(s app.Services) api.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		kind, _, limit, err := attributeQuery(r.URL.Query())
		if err != nil {
			return err
		}
		env, err := s.Contexts.Environment(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"))
		if err != nil {
			return err
		}
		values, err := s.Contexts.AttrValues(r.Context(), env.ID, r.PathValue("attributeName"), kind)
		if err != nil {
			return err
		}
		type valueRep struct {
			Name   json.RawMessage `json:"name"`
			Weight int64           `json:"weight"`
		}
		byKind := map[string][]valueRep{}
		var order []string
		for _, v := range values {
			if _, ok := byKind[v.Kind]; !ok {
				order = append(order, v.Kind)
			}
			if len(byKind[v.Kind]) < limit {
				byKind[v.Kind] = append(byKind[v.Kind], valueRep{Name: json.RawMessage(v.Value), Weight: v.Weight})
			}
		}
		items := make([]map[string]any, 0, len(order))
		for _, k := range order {
			items = append(items, map[string]any{"kind": k, "values": byKind[k]})
		}
		api.WriteJSON(w, http.StatusOK, map[string]any{"items": items})
		return nil
	}
}
