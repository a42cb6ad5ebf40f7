// Package example describes successful calls of operations, as each group
// declares them beside its handlers: the tests make every one on a world
// that holds one of every built resource, and check the answers against
// LaunchDarkly's reference, so a new group brings its own and edits no
// other group's files.
package example

// World is what examples read and make: the keys and ids of the resources
// the world holds, and calls that must succeed (a failure fails the test
// making the example).
type World struct {
	// URL and Token are the world server's base URL and an admin token,
	// for examples that have the server call itself (a flag import).
	URL, Token string

	Project, Flag, User string
	// Variations are the variation ids of the flag, in order.
	Variations []string

	TokenID                 string // made with POST /api/v2/tokens
	UsedTokenID             string // expires in a day and has been used
	MemberID, ReviewerToken string
	RoleKey, RoleID         string
	TeamKey, ClientID       string
	WebhookID               string
	TriggerID               string // an adaptive trigger in production
	AppliedID, ScheduledID  string // approval requests
	AuditID                 string

	// Must makes a call that has to answer status and returns its JSON
	// object (nil when the answer has no body).
	Must func(status int, method, path string, body any, headers ...string) map[string]any
	// Unique returns a key nothing else in the world uses, from prefix.
	Unique func(prefix string) string
	// SeenContext has an SDK report the user key (and an org), as version
	// 1.0 of the application appKey, and returns the user's context
	// instance id.
	SeenContext func(key, appKey string) string
	// RunWorker runs a group's named worker once, as if its time had come.
	RunWorker func(name string)
}

// Str reads a string field of an answer; "" when it has none.
func Str(m map[string]any, field string) string {
	s, _ := m[field].(string)
	return s
}

// A Call is one request of an operation: its path (with query), body and
// headers; the method is the operation's.
type Call struct {
	Path    string
	Body    any
	Headers []string
}

// Get, Post, Patch and Semantic make the common calls.
func Get(path string, headers ...string) Call { return Call{Path: path, Headers: headers} }

func Post(path string, body any, headers ...string) Call {
	return Call{Path: path, Body: body, Headers: headers}
}

// Patch is a JSON patch of ops.
func Patch(path string, ops ...Op) Call { return Call{Path: path, Body: ops} }

// Semantic is a semantic patch of instructions.
func Semantic(path string, ins ...map[string]any) Call {
	return Call{Path: path, Body: map[string]any{"instructions": ins}, Headers: []string{"Content-Type", SemanticType}}
}

// SemanticType is the Content-Type of a semantic patch.
const SemanticType = "application/json; domain-model=flagplane.semanticpatch"

// BetaHeader is what beta operations need.
var BetaHeader = []string{"SVC-API-Version", "beta"}

// Op is one operation of a JSON patch.
type Op struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
	From  string `json:"from,omitempty"`
}

// Replace and Add are JSON patch operations.
func Replace(path string, v any) Op { return Op{Op: "replace", Path: path, Value: v} }
func Add(path string, v any) Op     { return Op{Op: "add", Path: path, Value: v} }

// Instr is a semantic patch instruction: its kind and name/value pairs.
func Instr(kind string, kv ...any) map[string]any {
	m := map[string]any{"kind": kind}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// An Example makes the world ready for one successful call of an
// operation, and returns the call.
type Example func(w *World) Call

// Set is a group's examples.
type Set struct {
	// Calls are the examples, by operation id: one per built operation.
	Calls map[string]Example
	// Queries are further reads of an operation, by the query options that
	// change the answer's shape (expansions, full targeting), each checked
	// like the operation's own call.
	Queries map[string][]string
	// SpecTypes are the fields whose JSON type the spec sets apart from
	// LaunchDarkly's reference (mostly Unix ms as strings), by the
	// reference schema that holds them and the field's name.
	SpecTypes map[string]map[string]string
	// Dated are the fields of SpecTypes that a dated LD-API-Version (as
	// LaunchDarkly's Terraform provider sends) answers as integers.
	Dated map[string][]string
}

// API is the prefix of the management API.
const API = "/api/v2"

// Paths of the resources most examples reach.
func ProjectPath(p string) string { return API + "/projects/" + p }
func EnvsPath(p string) string    { return ProjectPath(p) + "/environments" }
func EnvPath(p, e string) string  { return EnvsPath(p) + "/" + e }
func FlagsPath(p string) string   { return API + "/flags/" + p }
func FlagPath(p, f string) string { return FlagsPath(p) + "/" + f }

// Paths several groups' examples and tests reach.
func AIConfigsPath(p string) string         { return ProjectPath(p) + "/ai-configs" }
func AIConfigPath(p, c string) string       { return AIConfigsPath(p) + "/" + c }
func AIModelsPath(p string) string          { return AIConfigsPath(p) + "/model-configs" }
func AIVariationPath(p, c, v string) string { return AIConfigPath(p, c) + "/variations/" + v }
func ApprovalPath(id string) string         { return ApprovalsPath + "/" + id }
func AuditEntryPath(id string) string       { return API + "/auditlog/" + id }
func PipelinesPath(p string) string         { return ProjectPath(p) + "/release-pipelines" }
func FlagReleasePath(p, f string) string    { return ProjectPath(p) + "/flags/" + f + "/release" }
func FlagExpiringPath(p, f, env string) string {
	return FlagPath(p, f) + "/expiring-user-targets/" + env
}
func UserExpiringPath(p, user, env string) string {
	return API + "/users/" + p + "/" + user + "/expiring-user-targets/" + env
}

// ApprovalsPath is the path of the approval requests.
const ApprovalsPath = API + "/approval-requests"

// PipelineBody is a release pipeline's create (and replace) body with one
// phase per environment.
func PipelineBody(key string, envs ...string) map[string]any {
	var phases []map[string]any
	for _, e := range envs {
		phases = append(phases, map[string]any{"name": "Phase " + e, "audiences": []map[string]any{{"environmentKey": e, "name": "All of " + e}}})
	}
	return map[string]any{"key": key, "name": "Pipeline " + key, "description": "ships " + key, "phases": phases, "tags": []string{"ops"}}
}
