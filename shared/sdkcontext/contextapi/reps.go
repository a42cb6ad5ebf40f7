package contextapi

import (
	"encoding/json"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/sdkcontext"
)

// contextKindRep is a context kind with its links.
type contextKindRep struct {
	sdkcontext.Kind
	Links api.Links `json:"_links"`
}

// kindRep is project projectKey's kind k as the group shows it.
func kindRep(projectKey string, k sdkcontext.Kind) contextKindRep {
	return contextKindRep{Kind: k, Links: api.Links{
		"self":   api.JSONLink("/api/v2/projects/" + projectKey + "/context-kinds/" + k.Key),
		"parent": api.JSONLink("/api/v2/projects/" + projectKey),
	}}
}

// contextKindsRep is a project's context kinds.
type contextKindsRep struct {
	Items []contextKindRep `json:"items"`
	Links api.Links        `json:"_links"`
}

// kindStatusRep answers a put of a context kind: "created" or "updated".
type kindStatusRep struct {
	Status string    `json:"status"`
	Links  api.Links `json:"_links"`
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

// contextsRep is a page of contexts or context instances of an
// environment; totalCount only when asked for (includeTotalCount).
type contextsRep struct {
	Items             []contextRecord `json:"items"`
	EnvironmentID     string          `json:"_environmentId"`
	Links             api.Links       `json:"_links"`
	ContinuationToken string          `json:"continuationToken,omitempty"`
	TotalCount        *int64          `json:"totalCount,omitempty"`
}

// nameRep is an attribute name and how many contexts carry it.
type nameRep struct {
	Name     string `json:"name"`
	Weight   int64  `json:"weight"`
	Redacted bool   `json:"redacted"`
}

// kindNamesRep are the attribute names of one context kind.
type kindNamesRep struct {
	Kind  string    `json:"kind"`
	Names []nameRep `json:"names"`
}

type attributeNamesRep struct {
	Items []kindNamesRep `json:"items"`
}

// valueRep is an attribute value, as JSON, and how many contexts carry it.
type valueRep struct {
	Name   json.RawMessage `json:"name"`
	Weight int64           `json:"weight"`
}

// kindValuesRep are the values of an attribute in one context kind.
type kindValuesRep struct {
	Kind   string     `json:"kind"`
	Values []valueRep `json:"values"`
}

type attributeValuesRep struct {
	Items []kindValuesRep `json:"items"`
}

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
