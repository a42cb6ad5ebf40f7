package apptest

// Paths of release pipelines and flags' releases, which the tests of
// pipelines, release policies and projects reach (PipelineBody is in world.go).

// PipelinesPath is the path of project p's release pipelines.
func PipelinesPath(p string) string { return ProjectPath(p) + "/release-pipelines" }

// FlagReleasePath is the path of the release of flag f of project p.
func FlagReleasePath(p, f string) string { return ProjectPath(p) + "/flags/" + f + "/release" }
