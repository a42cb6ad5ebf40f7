package contextapi

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/evaluation"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
)

// evaluateContextInstance reads only: the context is not stored and
// nothing is recorded. limit defaults to -1, all flags, as the reference says.
func (h handlers) evaluateContextInstance(w http.ResponseWriter, r *http.Request) error {
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
	res, err := h.evaluation.Evaluate(r.Context(), pk, ek, c, evaluation.Query{
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
}

// evaluatePath is the path of the evaluations in an environment.
func evaluatePath(projectKey, envKey string) string {
	return "/api/v2/projects/" + projectKey + "/environments/" + envKey + "/flags/evaluate"
}
