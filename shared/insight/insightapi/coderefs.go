package insightapi

import (
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/insight"
)

// codeRefsOf is what insights read of code references.
func codeRefsOf(*app.App) insight.CodeRefs { return nil }
