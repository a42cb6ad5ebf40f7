package openapi

// The subset of OpenAPI 3.0.3 flagplane's document uses. Maps marshal
// with sorted keys and structs in field order, so the same input always
// gives the same bytes.

// Document is an OpenAPI 3.0.3 document.
type Document struct {
	OpenAPI    string                `json:"openapi"`
	Info       Info                  `json:"info"`
	Security   []SecurityRequirement `json:"security"`
	Tags       []Tag                 `json:"tags"`
	Paths      map[string]PathItem   `json:"paths"`
	Components Components            `json:"components"`

	byID map[string]*Operation // see operation
}

// Info names the API.
type Info struct {
	Title       string `json:"title"`
	Version     string `json:"version"`
	Description string `json:"description"`
}

// SecurityRequirement names security schemes an operation accepts.
type SecurityRequirement map[string][]string

// Tag is a resource group.
type Tag struct {
	Name string `json:"name"`
}

// PathItem holds the operations of one path by lower-case method.
type PathItem map[string]*Operation

// Operation is one method of a path.
type Operation struct {
	OperationID string      `json:"operationId"`
	Summary     string      `json:"summary"`
	Description string      `json:"description,omitempty"`
	Tags        []string    `json:"tags"`
	Parameters  []Parameter `json:"parameters,omitempty"`
	// Security is empty, not absent, for operations that take no token.
	Security  *[]SecurityRequirement `json:"security,omitempty"`
	Responses map[string]*Response   `json:"responses"`
}

// Parameter is a path or header parameter.
type Parameter struct {
	Name        string  `json:"name"`
	In          string  `json:"in"`
	Description string  `json:"description,omitempty"`
	Required    bool    `json:"required"`
	Schema      *Schema `json:"schema"`
}

// Response is an answer of one status, or a $ref to a shared one.
type Response struct {
	Ref         string               `json:"$ref,omitempty"`
	Description string               `json:"description,omitempty"`
	Content     map[string]MediaType `json:"content,omitempty"`
}

// MediaType holds the schema of a body.
type MediaType struct {
	Schema *Schema `json:"schema"`
}

// Components are the named schemas, responses and security schemes.
type Components struct {
	Schemas         map[string]*Schema        `json:"schemas"`
	Responses       map[string]*Response      `json:"responses"`
	SecuritySchemes map[string]SecurityScheme `json:"securitySchemes"`
}

// SecurityScheme is how a caller authenticates.
type SecurityScheme struct {
	Type        string `json:"type"`
	In          string `json:"in"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// Schema is a JSON schema as OpenAPI 3.0 has them. A schema with no type,
// $ref or allOf accepts any value.
type Schema struct {
	Ref                  string             `json:"$ref,omitempty"`
	AllOf                []*Schema          `json:"allOf,omitempty"`
	Type                 string             `json:"type,omitempty"`
	Format               string             `json:"format,omitempty"`
	Pattern              string             `json:"pattern,omitempty"`
	Description          string             `json:"description,omitempty"`
	Nullable             bool               `json:"nullable,omitempty"`
	Enum                 []string           `json:"enum,omitempty"`
	Properties           map[string]*Schema `json:"properties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	Items                *Schema            `json:"items,omitempty"`
	AdditionalProperties *Schema            `json:"additionalProperties,omitempty"`
}
