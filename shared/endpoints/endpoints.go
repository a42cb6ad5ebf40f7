// Package endpoints adapts the domain services to HTTP: one handler per
// catalog operation, keyed by operation id, and the JSON representations
// clients see.
package endpoints

import (
	"context"
	"net/http"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/approval"
	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/evaluation"
	"github.com/flagplane/flagplane/shared/expiring"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/member"
	"github.com/flagplane/flagplane/shared/oauth"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/role"
	"github.com/flagplane/flagplane/shared/team"
	"github.com/flagplane/flagplane/shared/token"
	"github.com/flagplane/flagplane/shared/webhook"
)

// BodyActions returns, by operation id, how each JSON-patch update's
// actions follow from its body, for the authorization check.
func BodyActions() map[string]api.BodyActions {
	of := func(actions func(patch.Patch) ([]string, error)) api.BodyActions {
		return func(r *http.Request, body []byte) ([]string, error) {
			p, err := parsePatch(r, body)
			if err != nil {
				return nil, err
			}
			return actions(p)
		}
	}
	return map[string]api.BodyActions{
		"patchEnvironment": of(environment.PatchActions),
		"patchProject":     of(project.PatchActions),
		"patchCustomRole":  of(role.PatchActions),
		"patchMember":      of(member.PatchActions),
		"patchToken":       of(token.PatchActions),
		"patchTeam":        of(team.PatchActions),
		"patchWebhook":     of(webhook.PatchActions),
		"patchOAuthClient": of(oauth.PatchActions),
		"patchFeatureFlag": flagPatchActions,

		"patchExpiringFlagsForUser": expiringPatchActions,
		"patchExpiringUserTargets":  expiringPatchActions,
	}
}

// tagger reads the tags of projects and environments for tag-selecting statements.
type tagger struct{ s Services }

// Tagger returns the api.Tagger over the project and environment services.
func Tagger(s Services) api.Tagger { return tagger{s} }

func (t tagger) Tags(ctx context.Context, projectKey, envKey string) ([]string, []string, error) {
	var pt, et []string
	p, err := t.s.Projects.Get(ctx, projectKey)
	switch {
	case err == nil:
		pt = p.Tags
	case !fault.Is(err, fault.NotFound):
		return nil, nil, err
	}
	if envKey != "" {
		e, err := t.s.Environments.Get(ctx, projectKey, envKey)
		switch {
		case err == nil:
			et = e.Tags
		case !fault.Is(err, fault.NotFound):
			return nil, nil, err
		}
	}
	return pt, et, nil
}

// accessOf is the caller's `_access` object on a resource.
func accessOf(r *http.Request, res policy.Resource, actions []string) policy.Access {
	p, _ := identity.From(r.Context())
	return p.Access(res, actions)
}

// Services are the domain services the handlers call.
type Services struct {
	Projects     *project.Service
	Environments *environment.Service
	Audit        *audit.Log
	Roles        *role.Service
	Members      *member.Service
	Tokens       *token.Service
	OAuth        *oauth.Service
	Teams        *team.Service
	Webhooks     *webhook.Service
	Evaluation   *evaluation.Service
	Flags        *flag.Service
	Expiring     *expiring.Service
	Approvals    *approval.Service
}

// Handlers returns every built operation's handler, by operation id.
func Handlers(s Services) map[string]api.Handler {
	h := map[string]api.Handler{}
	for _, part := range []map[string]api.Handler{projectHandlers(s), environmentHandlers(s), auditHandlers(s), roleHandlers(s), memberHandlers(s), tokenHandlers(s), oauthHandlers(s), teamHandlers(s), webhookHandlers(s), evaluateHandlers(s), flagHandlers(s), expiringHandlers(s), approvalHandlers(s)} {
		for id, fn := range part {
			h[id] = fn
		}
	}
	return h
}
