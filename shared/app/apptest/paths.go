package apptest

import "github.com/flagplane/flagplane/shared/example"

// Paths of the resources most groups' tests reach, built one way (the
// example package's).

// API is the prefix of the management API.
const API = example.API

// BetaHeader asks for the beta version of the API, as beta operations require.
var BetaHeader = example.BetaHeader

var (
	ProjectPath = example.ProjectPath
	EnvsPath    = example.EnvsPath
	EnvPath     = example.EnvPath
	FlagsPath   = example.FlagsPath
	FlagPath    = example.FlagPath

	AuditEntryPath = example.AuditEntryPath
)
