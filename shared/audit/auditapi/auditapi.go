// Package auditapi serves the auditlog group over HTTP: the audit log's
// pages, its search by policy statements, its counts over time, and one
// entry in full.
package auditapi

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/reps"
)

// New is the auditlog group over a.
func New(a *app.App) app.Group {
	h := handlers{log: a.Services.Audit, now: a.Now}
	return app.Group{
		Name:     "auditlog",
		Examples: examples(),
		Handlers: map[string]api.Handler{
			"getAuditLogEntries":      h.getAuditLogEntries,
			"postAuditLogEntries":     h.postAuditLogEntries,
			"postAuditLogEntryCounts": h.postAuditLogEntryCounts,
			"getAuditLogEntry":        h.getAuditLogEntry,
		},
		Answers: map[string]api.Answer{
			"getAuditLogEntries":      {Status: http.StatusOK, Rep: entriesRep{}},
			"postAuditLogEntries":     {Status: http.StatusOK, Rep: entriesRep{}},
			"postAuditLogEntryCounts": {Status: http.StatusOK, Rep: countsRep{}},
			"getAuditLogEntry":        {Status: http.StatusOK, Rep: reps.Entry{}},
		},
	}
}

// handlers serve the group's operations; now is the app's clock, the end
// of a count's default span.
type handlers struct {
	log *audit.Log
	now func() time.Time
}

type entriesRep struct {
	Links api.Links    `json:"_links"`
	Items []reps.Entry `json:"items"`
}

type countBucketRep struct {
	Timestamp int64 `json:"timestamp"`
	Count     int64 `json:"count"`
}

// countsRep is the reference's CountBucketsResult: bucket i starts at
// after + i*bucketIntervalMs.
type countsRep struct {
	Buckets          []countBucketRep `json:"buckets"`
	TotalCount       int64            `json:"totalCount"`
	BucketIntervalMs int64            `json:"bucketIntervalMs"`
}

func (h handlers) getAuditLogEntries(w http.ResponseWriter, r *http.Request) error {
	return h.listEntries(w, r, nil)
}

func (h handlers) postAuditLogEntries(w http.ResponseWriter, r *http.Request) error {
	match, err := readStatements(w, r, false)
	if err != nil {
		return err
	}
	return h.listEntries(w, r, match)
}

func (h handlers) postAuditLogEntryCounts(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	match, err := readStatements(w, r, true)
	if err != nil {
		return err
	}
	if q.Get("after") == "" {
		return fault.New(fault.Invalid, "query parameter \"after\" is required (Unix ms)")
	}
	after, err := api.IntParam(q, "after", 0, 0, 1<<53)
	if err != nil {
		return err
	}
	before, err := api.IntParam(q, "before", h.now().UnixMilli(), 0, 1<<53)
	if err != nil {
		return err
	}
	buckets, err := api.IntParam(q, "buckets", 50, 1, 500)
	if err != nil {
		return err
	}
	res, err := h.log.Counts(r.Context(), audit.CountQuery{After: after, Before: before, Buckets: int(buckets), Match: visibleAnd(r, match)})
	if err != nil {
		return err
	}
	out := countsRep{TotalCount: res.Total, BucketIntervalMs: res.IntervalMs, Buckets: make([]countBucketRep, len(res.Counts))}
	for i, n := range res.Counts {
		out.Buckets[i] = countBucketRep{Timestamp: after + int64(i)*res.IntervalMs, Count: n}
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h handlers) getAuditLogEntry(w http.ResponseWriter, r *http.Request) error {
	e, err := h.log.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := entryVisible(r, e); err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, reps.NewEntry(e, true))
	return nil
}

// listEntries writes a page of the audit log, of the entries match keeps
// (all when nil) among those the caller may read. A search's next link
// repeats it: a POST with the same body.
func (h handlers) listEntries(w http.ResponseWriter, r *http.Request, match func(audit.Entry) bool) error {
	q := r.URL.Query()
	limit, err := api.IntParam(q, "limit", 10, 1, 20)
	if err != nil {
		return err
	}
	before, err := api.IntParam(q, "before", 0, 0, 1<<62)
	if err != nil {
		return err
	}
	after, err := api.IntParam(q, "after", 0, 0, 1<<62)
	if err != nil {
		return err
	}
	res, err := h.log.List(r.Context(), audit.ListQuery{Before: before, After: after, Q: q.Get("q"), Limit: int(limit), Cursor: q.Get("cursor"), Match: visibleAnd(r, match)})
	if err != nil {
		return err
	}
	q.Del("cursor")
	out := entriesRep{Links: api.CursorLinks("/api/v2/auditlog", q, "cursor", res.Next), Items: make([]reps.Entry, 0, len(res.Entries))}
	for _, e := range res.Entries {
		out.Items = append(out.Items, reps.NewEntry(e, false))
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

// entryVisible refuses an entry about something the caller may not read:
// each resource its accesses name passes the check a GET of it makes, so
// the log does not show what a role hides (a denied project's flags).
func entryVisible(r *http.Request, e audit.Entry) error {
	for _, a := range e.Accesses {
		if res, ok := policy.ResourceOf(a.Resource); ok {
			if err := api.RequireView(r, res, identity.ViewAction); err != nil {
				return err
			}
		}
	}
	return nil
}

// visibleAnd keeps the entries the caller may read that match keeps (all
// of them when match is nil), for lists and counts.
func visibleAnd(r *http.Request, match func(audit.Entry) bool) func(audit.Entry) bool {
	return func(e audit.Entry) bool {
		return (match == nil || match(e)) && entryVisible(r, e) == nil
	}
}

// readStatements reads a search body, a list of policy statements, and
// returns the filter keeping entries one of whose accesses they allow (the
// matcher webhooks use). No body or an empty list keeps every entry,
// unless required.
func readStatements(w http.ResponseWriter, r *http.Request, required bool) (func(audit.Entry) bool, error) {
	body, err := api.ReadBody(w, r)
	if fault.Is(err, fault.Invalid) && !required && (r.ContentLength == 0 || r.Body == http.NoBody) {
		body, err = nil, nil // the search's body is optional: no statements
	}
	if err != nil {
		return nil, err
	}
	var stmts []policy.Statement
	if len(body) > 0 {
		if err := json.Unmarshal(body, &stmts); err != nil {
			return nil, fault.New(fault.Invalid, "body must be a JSON array of policy statements (resources or notResources, actions or notActions, effect): %s", err.Error())
		}
	}
	if len(stmts) == 0 {
		return nil, nil
	}
	if err := policy.Validate(stmts); err != nil {
		return nil, err
	}
	match, err := audit.Matcher(stmts)
	if err != nil {
		return nil, fault.New(fault.Invalid, "statements do not compile: %s", err.Error())
	}
	return match, nil
}
