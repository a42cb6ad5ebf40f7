// Package endpoints adapts the domain services to HTTP: one handler per
// catalog operation, keyed by operation id, and the JSON representations
// clients see.
package endpoints

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/flagplane/flagplane/shared/aiconfig"
	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/application"
	"github.com/flagplane/flagplane/shared/approval"
	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/evaluation"
	"github.com/flagplane/flagplane/shared/expiring"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/ingest"
	"github.com/flagplane/flagplane/shared/member"
	"github.com/flagplane/flagplane/shared/oauth"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/pipeline"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/releasepolicy"
	"github.com/flagplane/flagplane/shared/role"
	"github.com/flagplane/flagplane/shared/sdkcontext"
	"github.com/flagplane/flagplane/shared/team"
	"github.com/flagplane/flagplane/shared/token"
	"github.com/flagplane/flagplane/shared/trigger"
	"github.com/flagplane/flagplane/shared/webhook"
)

// Needs returns, by operation id, the rights each operation needs when
// they follow from the request rather than from the catalog alone: the
// paths of a JSON patch, the instructions of a semantic patch and the
// environment they act in, the flag and environment of an approval request.
func Needs(s Services) map[string]api.Needs {
	return map[string]api.Needs{
		"patchEnvironment":        api.PatchNeeds("an environment", patch.ChangingActions(environment.PatchActions)),
		"patchProject":            api.PatchNeeds("a project", patch.ChangingActions(project.PatchActions)),
		"patchCustomRole":         api.PatchNeeds("a custom role", role.PatchActions),
		"patchMember":             api.PatchNeeds("a member", member.PatchActions),
		"patchToken":              api.PatchNeeds("an access token", token.PatchActions),
		"patchTeam":               teamPatchNeeds,
		"patchWebhook":            api.PatchNeeds("a webhook", webhook.PatchActions),
		"patchOAuthClient":        api.PatchNeeds("an OAuth client", oauth.PatchActions),
		"patchFeatureFlag":        flagPatchNeeds,
		"patchApplication":        api.PatchNeeds("an application", application.PatchActions),
		"patchApplicationVersion": api.PatchNeeds("an application version", application.VersionPatchActions),

		"patchExpiringFlagsForUser": expiringForUserNeeds,

		"getApprovalRequest":        storedApprovalNeeds(s),
		"postApprovalRequest":       approvalCreateNeeds,
		"postApprovalRequestReview": storedApprovalNeeds(s),
		"postApprovalRequestApply":  storedApprovalNeeds(s),
		"deleteApprovalRequest":     storedApprovalNeeds(s),
		"patchApprovalRequest":      storedApprovalNeeds(s),

		"postAdaptiveTrigger":  adaptiveTriggerCreateNeeds,
		"patchAdaptiveTrigger": adaptiveTriggerPatchNeeds(s),
	}
}

// envNeeds are needs of flag actions, each in the environment it acts in.
func envNeeds(list []flag.EnvAction) []api.Need {
	out := make([]api.Need, len(list))
	for i, ea := range list {
		out[i] = api.Need{Action: ea.Action}
		if ea.Env != "" {
			out[i].Keys = map[string]string{"env": ea.Env}
		}
	}
	return out
}

// tagger reads the stored tags of projects, environments and flags for
// tag-selecting statements.
type tagger struct{ s Services }

// Tagger returns the api.Tagger over the project, environment and flag services.
func Tagger(s Services) api.Tagger { return tagger{s} }

func (t tagger) Tags(ctx context.Context, res policy.Resource) (policy.Resource, error) {
	var projectKey string
	var out policy.Resource
	for i, seg := range res.Segments() {
		tags := seg.Tags // a create's own tags, from its body
		stored, err := t.stored(ctx, seg, projectKey)
		if err != nil {
			return res, err
		}
		tags = append(slices.Clip(tags), stored...)
		if seg.Kind == "proj" {
			projectKey = seg.Key
		}
		if i == 0 {
			out = policy.NewResource(seg.Kind, seg.Key, tags...)
		} else {
			out = out.Child(seg.Kind, seg.Key, tags...)
		}
	}
	return out, nil
}

// stored returns the tags of the project, environment or flag seg names,
// none for a wildcard key, another kind, or a resource that does not exist.
func (t tagger) stored(ctx context.Context, seg policy.ResourceSegment, projectKey string) ([]string, error) {
	if seg.Key == "*" || seg.Key == "" {
		return nil, nil
	}
	var tags []string
	var err error
	switch {
	case seg.Kind == "proj":
		var p *project.Project
		if p, err = t.s.Projects.Get(ctx, seg.Key); err == nil {
			tags = p.Tags
		}
	case seg.Kind == "env" && projectKey != "" && projectKey != "*":
		var e *environment.Environment
		if e, err = t.s.Environments.Get(ctx, projectKey, seg.Key); err == nil {
			tags = e.Tags
		}
	case seg.Kind == "flag" && projectKey != "" && projectKey != "*":
		var f *flag.Flag
		if f, err = t.s.Flags.Load(ctx, projectKey, seg.Key); err == nil {
			tags = f.Tags
		}
	default:
		return nil, nil
	}
	if err != nil && !fault.Is(err, fault.NotFound) {
		return nil, fmt.Errorf("load tags of %s/%s: %w", seg.Kind, seg.Key, err)
	}
	return tags, nil
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
	// ReleasePolicies are a project's ranked release policies (beta).
	ReleasePolicies *releasepolicy.Service
	// Ingest takes SDK event payloads to the aggregator.
	Ingest   ingest.Queue
	Contexts *sdkcontext.Service
	// Applications are added by SDK events and edited through the API.
	Applications *application.Service
	// Triggers are adaptive triggers: flag instructions an alert source fires.
	Triggers *trigger.Service
	// Pipelines are release pipelines and the flags' releases through them (beta).
	Pipelines *pipeline.Service
	// AIConfigs are AI Configs, their variations and model configs.
	AIConfigs *aiconfig.Service
}

// Handlers returns every built operation's handler, by operation id.
func Handlers(s Services) map[string]api.Handler {
	h := map[string]api.Handler{}
	for _, part := range []map[string]api.Handler{projectHandlers(s), environmentHandlers(s), auditHandlers(s), roleHandlers(s), memberHandlers(s), tokenHandlers(s), oauthHandlers(s), teamHandlers(s), webhookHandlers(s), evaluateHandlers(s), flagHandlers(s), expiringHandlers(s), approvalHandlers(s), eventHandlers(s), contextHandlers(s), applicationHandlers(s), adaptiveTriggerHandlers(s)} {
		for id, fn := range part {
			h[id] = fn
		}
	}
	for id, fn := range aiConfigHandlers(s) {
		h[id] = fn
	}
	for id, fn := range pipelineHandlers(s) {
		h[id] = fn
	}
	for id, fn := range releasePolicyHandlers(s) {
		h[id] = fn
	}
	return h
}
