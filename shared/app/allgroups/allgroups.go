// Package allgroups links every group registered with app.Register: the
// local server and the test server serve them all, while each Lambda
// function imports only its own group's package.
package allgroups

import (
	_ "github.com/flagplane/flagplane/shared/coderefs/coderefsapi"
	_ "github.com/flagplane/flagplane/shared/destination/destinationapi"
	_ "github.com/flagplane/flagplane/shared/featurestore/featurestoreapi"
	_ "github.com/flagplane/flagplane/shared/flagimport/flagimportapi"
	_ "github.com/flagplane/flagplane/shared/insight/insightapi"
	_ "github.com/flagplane/flagplane/shared/integration/integrationapi"
	_ "github.com/flagplane/flagplane/shared/usage/usageapi"
)
