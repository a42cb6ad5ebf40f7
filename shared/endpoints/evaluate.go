package endpoints

import (
	"encoding/json"
	"net/http"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/evaluation"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
)

// evaluationRep is one flag's answer for a context, as the reference's
// ContextInstanceEvaluation.
type evaluationRep struct {
	Name   string          `json:"name"`
	Key    string          `json:"key"`
	Value  json.RawMessage `json:"_value"`
	Reason reasonRep       `json:"reason"`
	Links  api.Links       `json:"_links"`
}

// reasonRep is the reference's ContextInstanceEvaluationReason: kind
// always, the other fields only when they apply (as SDKs serialise reasons).
type reasonRep struct {
	Kind            string `json:"kind"`
	RuleIndex       *int   `json:"ruleIndex,omitempty"`
	RuleID          string `json:"ruleID,omitempty"`
	PrerequisiteKey string `json:"prerequisiteKey,omitempty"`
	InExperiment    bool   `json:"inExperiment,omitempty"`
	ErrorKind       string `json:"errorKind,omitempty"`
}

type evaluationsRep struct {
	Items      []evaluationRep `json:"items"`
	TotalCount int64           `json:"totalCount"`
	Links      api.Links       `json:"_links"`
}

func evaluatePath(projectKey, envKey string) string {
	return "/api/v2/projects/" + projectKey + "/environments/" + envKey + "/flags/evaluate"
}

func evaluateHandlers(s app.Services) map[string]api.Handler {
	return map[string]api.Handler{
		// evaluateContextInstance reads only: the context is not stored and
		// nothing is recorded. limit defaults to -1, all flags, as the reference says.
		"evaluateContextInstance": func(w http.ResponseWriter, r *http.Request) error {
			q := r.URL.Query()
			limit, err := api.IntParam(q, "limit", -1, -1, 1<<31)
			if err != nil {
				return err
			}
			if limit == 0 {
				return fault.New(fault.Invalid, "query parameter \"limit\" must be -1 (every flag) or at least 1, not 0")
			}
			offset, err := api.IntParam(q, "offset", 0, 0, 1<<31)
			if err != nil {
				return err
			}
			body, err := api.ReadBody(w, r)
			if err != nil {
				return err
			}
			c, err := evaluation.ParseContext(body)
			if err != nil {
				return err
			}
			pk, ek := r.PathValue("projectKey"), r.PathValue("environmentKey")
			res, err := s.Evaluation.Evaluate(r.Context(), pk, ek, c, evaluation.Query{
				Filter: q.Get("filter"), Sort: q.Get("sort"), Offset: offset, Limit: limit,
			})
			if err != nil {
				return err
			}
			path := evaluatePath(pk, ek)
			out := evaluationsRep{TotalCount: res.TotalCount, Items: make([]evaluationRep, 0, len(res.Items))}
			if limit > 0 {
				out.Links = api.OffsetLinks(path, q, offset, limit, res.TotalCount)
			} else {
				out.Links = api.CursorLinks(path, q, "", "")
			}
			for _, e := range res.Items {
				rr := e.Reason
				out.Items = append(out.Items, evaluationRep{
					Name: e.Name, Key: e.Key, Value: e.Value,
					Reason: reasonRep{Kind: rr.Kind, RuleIndex: rr.RuleIndex, RuleID: rr.RuleID, PrerequisiteKey: rr.PrerequisiteKey,
						InExperiment: rr.InExperiment, ErrorKind: rr.ErrorKind},
					Links: api.Links{
						"self": api.JSONLink(path),
						"flag": api.JSONLink(flag.Href(pk, e.Key)),
					},
				})
			}
			api.WriteJSON(w, http.StatusOK, out)
			return nil
		},
	}
}
