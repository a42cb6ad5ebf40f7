package allgroups_test

// Small helpers shared by the endpoint tests of this package.

const api = "/api/v2"

func projectPath(p string) string     { return api + "/projects/" + p }
func envsPath(p string) string        { return projectPath(p) + "/environments" }
func envPath(p, e string) string      { return envsPath(p) + "/" + e }
func auditEntryPath(id string) string { return api + "/auditlog/" + id }

func ptr[T any](v T) *T { return &v }
