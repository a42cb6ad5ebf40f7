// Package application holds applications (beta): the apps whose SDKs send
// events, added automatically from the SDK's X-LaunchDarkly-Tags
// (application-id, application-version) or edited through the API, their
// versions, and the flags each one evaluated.
package application

// Application is one application as stored.
type Application struct {
	Key          string `json:"key"`
	Name         string `json:"name"`
	Description  string `json:"description"`
	Kind         string `json:"kind"`
	AutoAdded    bool   `json:"autoAdded"`
	CreationDate int64  `json:"creationDate"`
	Version      int64  `json:"-"`
}

// Version is one version of an application.
type Version struct {
	Key          string `json:"key"`
	Name         string `json:"name"`
	AutoAdded    bool   `json:"autoAdded"`
	CreationDate int64  `json:"creationDate"`
	Supported    bool   `json:"supported"`
	Version      int64  `json:"-"`
}

// Flag records that the application evaluated a flag of a project.
type Flag struct {
	ProjectKey string `json:"projectKey"`
	FlagKey    string `json:"flagKey"`
	// EnvKey is an environment where it last did.
	EnvKey   string `json:"environmentKey"`
	LastSeen int64  `json:"lastSeen"`
}

// Kinds of application, as LaunchDarkly names them.
const (
	KindServer  = "server"
	KindBrowser = "browser"
	KindMobile  = "mobile"
)
