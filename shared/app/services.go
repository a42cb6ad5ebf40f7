package app

import (
	"github.com/flagplane/flagplane/shared/aiconfig"
	"github.com/flagplane/flagplane/shared/application"
	"github.com/flagplane/flagplane/shared/approval"
	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/evaluation"
	"github.com/flagplane/flagplane/shared/expiring"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/ingest"
	"github.com/flagplane/flagplane/shared/member"
	"github.com/flagplane/flagplane/shared/oauth"
	"github.com/flagplane/flagplane/shared/pipeline"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/releasepolicy"
	"github.com/flagplane/flagplane/shared/role"
	"github.com/flagplane/flagplane/shared/sdkcontext"
	"github.com/flagplane/flagplane/shared/segment"
	"github.com/flagplane/flagplane/shared/team"
	"github.com/flagplane/flagplane/shared/token"
	"github.com/flagplane/flagplane/shared/trigger"
	"github.com/flagplane/flagplane/shared/webhook"
)

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
	// Segments are the environments' segments, which flag rules match.
	Segments *segment.Service
}
