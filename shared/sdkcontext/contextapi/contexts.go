package contextapi

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/flagplane/flagplane/shared/api"
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

func (h handlers) getContextKinds(w http.ResponseWriter, r *http.Request) error {
	p := r.PathValue("projectKey")
	kinds, err := h.contexts.Kinds(r.Context(), p)
	if err != nil {
		return err
	}
	items := make([]contextKindRep, len(kinds))
	for i, k := range kinds {
		items[i] = kindRep(p, k)
	}
	api.WriteJSON(w, http.StatusOK, contextKindsRep{Items: items, Links: api.Self("/api/v2/projects/" + p + "/context-kinds")})
	return nil
}

func (h handlers) putContextKind(w http.ResponseWriter, r *http.Request) error {
	var in sdkcontext.KindInput
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	p, key := r.PathValue("projectKey"), r.PathValue("key")
	_, created, err := h.contexts.PutKind(r.Context(), p, key, in)
	if err != nil {
		return err
	}
	status := "updated"
	if created {
		status = "created"
	}
	api.WriteJSON(w, http.StatusOK, kindStatusRep{Status: status, Links: api.Self("/api/v2/projects/" + p + "/context-kinds/" + key)})
	return nil
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
	body := contextsRep{Items: items, EnvironmentID: env.ID, Links: links}
	if page.Cursor != "" {
		body.ContinuationToken = page.Cursor
		v := r.URL.Query()
		v.Del("continuationToken")
		v.Set("continuationToken", page.Cursor)
		v.Set("limit", jsonInt(int64(q.limit)))
		links["next"] = api.JSONLink(r.URL.Path + "?" + v.Encode())
	}
	if q.total {
		body.TotalCount = &page.Total
	}
	api.WriteJSON(w, http.StatusOK, body)
}

func (h handlers) getContexts(w http.ResponseWriter, r *http.Request) error {
	q, err := readContextQuery(r.URL.Query(), nil)
	if err != nil {
		return err
	}
	env, err := h.contexts.Environment(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"))
	if err != nil {
		return err
	}
	page, err := h.contexts.ByContext(r.Context(), env.ID, r.PathValue("kind"), r.PathValue("key"), q.filter, q.limit, q.cursor)
	if err != nil {
		return err
	}
	writeContexts(w, r, env, page, q, false, r.URL.RequestURI())
	return nil
}

func (h handlers) searchContexts(w http.ResponseWriter, r *http.Request) error {
	return h.search(w, r, false)
}

func (h handlers) searchContextInstances(w http.ResponseWriter, r *http.Request) error {
	return h.search(w, r, true)
}

// search answers a contexts search, as contexts or as their instances.
func (h handlers) search(w http.ResponseWriter, r *http.Request, asInstances bool) error {
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
	env, err := h.contexts.Environment(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"))
	if err != nil {
		return err
	}
	page, err := h.contexts.Search(r.Context(), env.ID, q.filter, q.limit, q.cursor, q.total)
	if err != nil {
		return err
	}
	writeContexts(w, r, env, page, q, asInstances, r.URL.RequestURI())
	return nil
}

func (h handlers) getContextInstances(w http.ResponseWriter, r *http.Request) error {
	q, err := readContextQuery(r.URL.Query(), nil)
	if err != nil {
		return err
	}
	env, err := h.contexts.Environment(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"))
	if err != nil {
		return err
	}
	in, err := h.contexts.Instance(r.Context(), env.ID, r.PathValue("id"))
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

func (h handlers) deleteContextInstance(w http.ResponseWriter, r *http.Request) error {
	env, err := h.contexts.Environment(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"))
	if err != nil {
		return err
	}
	if err := h.contexts.DeleteInstance(r.Context(), env, r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
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

func (h handlers) getContextAttributeNames(w http.ResponseWriter, r *http.Request) error {
	kind, name, limit, err := attributeQuery(r.URL.Query())
	if err != nil {
		return err
	}
	env, err := h.contexts.Environment(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"))
	if err != nil {
		return err
	}
	names, err := h.contexts.AttrNames(r.Context(), env.ID, kind)
	if err != nil {
		return err
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
	out := attributeNamesRep{Items: make([]kindNamesRep, 0, len(order))}
	for _, k := range order {
		out.Items = append(out.Items, kindNamesRep{Kind: k, Names: byKind[k]})
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h handlers) getContextAttributeValues(w http.ResponseWriter, r *http.Request) error {
	kind, _, limit, err := attributeQuery(r.URL.Query())
	if err != nil {
		return err
	}
	env, err := h.contexts.Environment(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"))
	if err != nil {
		return err
	}
	values, err := h.contexts.AttrValues(r.Context(), env.ID, r.PathValue("attributeName"), kind)
	if err != nil {
		return err
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
	out := attributeValuesRep{Items: make([]kindValuesRep, 0, len(order))}
	for _, k := range order {
		out.Items = append(out.Items, kindValuesRep{Kind: k, Values: byKind[k]})
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}
