// Package contextapi serves the contexts group: the context kinds of a
// project, the context instances SDK events recorded in an environment,
// their attributes, and the evaluation of every flag for a context.
package contextapi

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/evaluation"
	"github.com/flagplane/flagplane/shared/sdkcontext"
)

// New is the contexts group over a.
func New(a *app.App) app.Group {
	h := handlers{contexts: a.Services.Contexts, evaluation: a.Services.Evaluation}
	ok := func(rep any) api.Answer { return api.Answer{Status: http.StatusOK, Rep: rep} }
	return app.Group{
		Name:     "contexts",
		Examples: examples(),
		Handlers: map[string]api.Handler{
			"getContextKindsByProjectKey": h.getContextKinds,
			"putContextKind":              h.putContextKind,
			"getContexts":                 h.getContexts,
			"searchContexts":              h.searchContexts,
			"searchContextInstances":      h.searchContextInstances,
			"getContextInstances":         h.getContextInstances,
			"deleteContextInstances":      h.deleteContextInstance,
			"getContextAttributeNames":    h.getContextAttributeNames,
			"getContextAttributeValues":   h.getContextAttributeValues,
			"evaluateContextInstance":     h.evaluateContextInstance,
		},
		Answers: map[string]api.Answer{
			"getContextKindsByProjectKey": ok(contextKindsRep{}),
			"putContextKind":              ok(kindStatusRep{}),
			"getContexts":                 ok(contextsRep{}),
			"searchContexts":              ok(contextsRep{}),
			"searchContextInstances":      ok(contextsRep{}),
			"getContextInstances":         ok(contextsRep{}),
			"deleteContextInstances":      {Status: http.StatusNoContent},
			"getContextAttributeNames":    ok(attributeNamesRep{}),
			"getContextAttributeValues":   ok(attributeValuesRep{}),
			"evaluateContextInstance":     ok(evaluationsRep{}),
		},
	}
}

// handlers are the contexts group's operations.
type handlers struct {
	contexts   *sdkcontext.Service
	evaluation *evaluation.Service
}
