package apptest

import "github.com/flagplane/flagplane/shared/example"

// Paths of the resources most groups' tests reach, built one way.

// API is the prefix of the management API.
const API = "/api/v2"

// BetaHeader asks for the beta version of the API, as beta operations require.
var BetaHeader = example.BetaHeader

// ProjectPath is the path of project p.
func ProjectPath(p string) string { return API + "/projects/" + p }

// EnvsPath is the path of project p's environments.
func EnvsPath(p string) string { return ProjectPath(p) + "/environments" }

// EnvPath is the path of environment e of project p.
func EnvPath(p, e string) string { return EnvsPath(p) + "/" + e }

// FlagsPath is the path of project p's flags.
func FlagsPath(p string) string { return API + "/flags/" + p }

// FlagPath is the path of flag f of project p.
func FlagPath(p, f string) string { return FlagsPath(p) + "/" + f }

// AuditEntryPath is the path of the audit entry id.
func AuditEntryPath(id string) string { return API + "/auditlog/" + id }
