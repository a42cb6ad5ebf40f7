// Package allgroups names every group: the local server and the test
// server serve them all, while each Lambda function's main names its own.
package allgroups

import (
	"github.com/flagplane/flagplane/shared/aiconfig/aiconfigapi"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/application/applicationapi"
	"github.com/flagplane/flagplane/shared/approval/approvalapi"
	"github.com/flagplane/flagplane/shared/audit/auditapi"
	"github.com/flagplane/flagplane/shared/coderefs/coderefsapi"
	"github.com/flagplane/flagplane/shared/console/consoleapi"
	"github.com/flagplane/flagplane/shared/destination/destinationapi"
	"github.com/flagplane/flagplane/shared/environment/environmentapi"
	"github.com/flagplane/flagplane/shared/featurestore/featurestoreapi"
	"github.com/flagplane/flagplane/shared/flag/flagapi"
	"github.com/flagplane/flagplane/shared/flagimport/flagimportapi"
	"github.com/flagplane/flagplane/shared/ingest/eventapi"
	"github.com/flagplane/flagplane/shared/insight/insightapi"
	"github.com/flagplane/flagplane/shared/integration/integrationapi"
	"github.com/flagplane/flagplane/shared/member/memberapi"
	"github.com/flagplane/flagplane/shared/oauth/oauthapi"
	"github.com/flagplane/flagplane/shared/pipeline/pipelineapi"
	"github.com/flagplane/flagplane/shared/project/projectapi"
	"github.com/flagplane/flagplane/shared/releasepolicy/releasepolicyapi"
	"github.com/flagplane/flagplane/shared/role/roleapi"
	"github.com/flagplane/flagplane/shared/sdkapi"
	"github.com/flagplane/flagplane/shared/sdkcontext/contextapi"
	"github.com/flagplane/flagplane/shared/segment/segmentapi"
	"github.com/flagplane/flagplane/shared/team/teamapi"
	"github.com/flagplane/flagplane/shared/token/tokenapi"
	"github.com/flagplane/flagplane/shared/trigger/triggerapi"
	"github.com/flagplane/flagplane/shared/usage/usageapi"
	"github.com/flagplane/flagplane/shared/webhook/webhookapi"
)

// List is every group, in the catalog's order of groups.
func List() []app.NewGroup {
	return []app.NewGroup{
		triggerapi.New,
		aiconfigapi.New,
		applicationapi.New,
		approvalapi.New,
		auditapi.New,
		featurestoreapi.BigSegments,
		coderefsapi.New,
		consoleapi.New,
		contextapi.New,
		featurestoreapi.Delivery,
		destinationapi.New,
		environmentapi.New,
		eventapi.New,
		flagimportapi.New,
		flagapi.New,
		insightapi.New,
		integrationapi.New,
		memberapi.New,
		oauthapi.New,
		projectapi.New,
		pipelineapi.New,
		releasepolicyapi.New,
		roleapi.New,
		sdkapi.New,
		segmentapi.New,
		teamapi.New,
		tokenapi.New,
		usageapi.New,
		webhookapi.New,
	}
}
