// Package aiconfig holds AI Configs: per project, the configs, the
// variations of each (every edit of a variation stores a new version of
// it, the older ones are kept) and the model configs variations point at.
package aiconfig

// Modes of an AI Config, as LaunchDarkly names them.
const (
	ModeCompletion = "completion"
	ModeAgent      = "agent"
	ModeJudge      = "judge"
)

// States of a variation.
const (
	StatePublished = "published"
	StateArchived  = "archived"
)

// Config is one AI Config as stored, without its variations.
type Config struct {
	Key                 string   `json:"key"`
	Name                string   `json:"name"`
	Description         string   `json:"description"`
	Mode                string   `json:"mode"`
	Tags                []string `json:"tags"`
	EvaluationMetricKey string   `json:"evaluationMetricKey,omitempty"`
	IsInverted          *bool    `json:"isInverted,omitempty"`
	CreatedAt           int64    `json:"createdAt"`
	UpdatedAt           int64    `json:"updatedAt"`
	// Version is the stored item's version: 1 at creation, one more per change.
	Version int64 `json:"version"`
}

// Message is one prompt message of a variation.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Judge is one judge of a variation's judge configuration.
type Judge struct {
	SamplingRate   float64 `json:"samplingRate"`
	JudgeConfigKey string  `json:"judgeConfigKey"`
}

// JudgeConfiguration lists the judges that evaluate a variation's output.
type JudgeConfiguration struct {
	Judges []Judge `json:"judges"`
}

// Tool is a tool attached to a variation, at a version.
type Tool struct {
	Key     string `json:"key"`
	Version int64  `json:"version"`
}

// Variation is one version of a variation of an AI Config. Each version is
// its own stored item; the latest is the variation.
type Variation struct {
	ID                 string              `json:"_id"`
	Key                string              `json:"key"`
	Name               string              `json:"name"`
	Description        string              `json:"description,omitempty"`
	Instructions       string              `json:"instructions,omitempty"`
	Comment            string              `json:"comment,omitempty"`
	Color              string              `json:"color,omitempty"`
	Version            int64               `json:"version"`
	State              string              `json:"state"`
	CreatedAt          int64               `json:"createdAt"`
	PublishedAt        *int64              `json:"_publishedAt,omitempty"`
	ArchivedAt         *int64              `json:"_archivedAt,omitempty"`
	Messages           []Message           `json:"messages"`
	Model              map[string]any      `json:"model"`
	ModelConfigKey     string              `json:"modelConfigKey,omitempty"`
	ModelConfigVersion int64               `json:"modelConfigVersion,omitempty"`
	JudgeConfiguration *JudgeConfiguration `json:"judgeConfiguration,omitempty"`
	Tools              []Tool              `json:"tools,omitempty"`
	OutputFormat       map[string]any      `json:"outputFormat,omitempty"`
}

// ModelConfig is one AI model config of a project. Model configs are not
// edited in place: version is 1, the only version that exists.
type ModelConfig struct {
	Key                     string         `json:"key"`
	Name                    string         `json:"name"`
	ID                      string         `json:"id"`
	Icon                    string         `json:"icon,omitempty"`
	Provider                string         `json:"provider,omitempty"`
	Global                  bool           `json:"global"`
	Params                  map[string]any `json:"params,omitempty"`
	CustomParams            map[string]any `json:"customParams,omitempty"`
	Tags                    []string       `json:"tags"`
	Version                 int64          `json:"version"`
	CostPerInputToken       *float64       `json:"costPerInputToken,omitempty"`
	CostPerOutputToken      *float64       `json:"costPerOutputToken,omitempty"`
	CostPerCachedInputToken *float64       `json:"costPerCachedInputToken,omitempty"`
	IsRestricted            bool           `json:"isRestricted"`
	// stored is the stored item's version: it moves whenever a variation
	// starts using the model config (see Service.modelRef).
	stored int64
}

// ConfigInput is the body of a create request for an AI Config.
type ConfigInput struct {
	Key                 string          `json:"key"`
	Name                string          `json:"name"`
	Description         string          `json:"description"`
	Mode                string          `json:"mode"`
	Tags                []string        `json:"tags"`
	EvaluationMetricKey string          `json:"evaluationMetricKey"`
	IsInverted          *bool           `json:"isInverted"`
	DefaultVariation    *VariationInput `json:"defaultVariation"`
}

// ConfigPatch is the body of an update of an AI Config: the fields given replace the stored ones.
type ConfigPatch struct {
	Name                *string   `json:"name"`
	Description         *string   `json:"description"`
	Tags                *[]string `json:"tags"`
	EvaluationMetricKey *string   `json:"evaluationMetricKey"`
	IsInverted          *bool     `json:"isInverted"`
}

// VariationInput is the body of a create request for a variation.
type VariationInput struct {
	Key                string              `json:"key"`
	Name               string              `json:"name"`
	Description        string              `json:"description"`
	Instructions       string              `json:"instructions"`
	Comment            string              `json:"comment"`
	Messages           []Message           `json:"messages"`
	Model              map[string]any      `json:"model"`
	ModelConfigKey     string              `json:"modelConfigKey"`
	JudgeConfiguration *JudgeConfiguration `json:"judgeConfiguration"`
	Tools              []Tool              `json:"tools"`
	ToolKeys           []string            `json:"toolKeys"`
	OutputFormat       map[string]any      `json:"outputFormat"`
}

// VariationPatch is the body of an update of a variation (spec 4.12): the
// fields given replace the stored ones, and the result is a new version.
type VariationPatch struct {
	Name               *string             `json:"name"`
	Description        *string             `json:"description"`
	Instructions       *string             `json:"instructions"`
	Comment            *string             `json:"comment"`
	Messages           *[]Message          `json:"messages"`
	Model              map[string]any      `json:"model"`
	ModelConfigKey     *string             `json:"modelConfigKey"`
	ModelConfigVersion *int64              `json:"modelConfigVersion"`
	JudgeConfiguration *JudgeConfiguration `json:"judgeConfiguration"`
	Tools              *[]Tool             `json:"tools"`
	ToolKeys           []string            `json:"toolKeys"`
	Skills             []Tool              `json:"skills"`
	OutputFormat       map[string]any      `json:"outputFormat"`
	State              *string             `json:"state"`
	Published          *bool               `json:"published"`
}

// ModelConfigInput is the body of a create request for a model config.
type ModelConfigInput struct {
	Key                     string         `json:"key"`
	Name                    string         `json:"name"`
	ID                      string         `json:"id"`
	Icon                    string         `json:"icon"`
	Provider                string         `json:"provider"`
	Params                  map[string]any `json:"params"`
	CustomParams            map[string]any `json:"customParams"`
	Tags                    []string       `json:"tags"`
	CostPerInputToken       *float64       `json:"costPerInputToken"`
	CostPerOutputToken      *float64       `json:"costPerOutputToken"`
	CostPerCachedInputToken *float64       `json:"costPerCachedInputToken"`
}
