// Package environment holds environments of a project: their fields and
// rules, and the service that creates, lists, reads, patches and deletes them.
package environment

import (
	"crypto/rand"
	"encoding/hex"
	"regexp"
	"strings"

	"github.com/google/uuid"

	"github.com/flagplane/flagplane/shared/fault"
)

// ServiceKind is the serviceKind of the built-in approval system.
const ServiceKind = "flagplane"

// ApprovalSettings says when a change to a flag needs an approved request.
type ApprovalSettings struct {
	Required                         bool           `json:"required"`
	BypassApprovalsForPendingChanges bool           `json:"bypassApprovalsForPendingChanges"`
	MinNumApprovals                  int            `json:"minNumApprovals"`
	CanReviewOwnRequest              bool           `json:"canReviewOwnRequest"`
	CanApplyDeclinedChanges          bool           `json:"canApplyDeclinedChanges"`
	AutoApplyApprovedChanges         bool           `json:"autoApplyApprovedChanges"`
	ServiceKind                      string         `json:"serviceKind"`
	ServiceConfig                    map[string]any `json:"serviceConfig"`
	RequiredApprovalTags             []string       `json:"requiredApprovalTags"`
	ServiceKindConfigurationID       string         `json:"serviceKindConfigurationId,omitempty"`
}

// DefaultApprovalSettings are the settings of a new environment: nothing required.
func DefaultApprovalSettings() ApprovalSettings {
	return ApprovalSettings{
		MinNumApprovals:         1,
		CanApplyDeclinedChanges: true,
		ServiceKind:             ServiceKind,
		ServiceConfig:           map[string]any{},
		RequiredApprovalTags:    []string{},
	}
}

// Environment is one environment as stored.
type Environment struct {
	ID                       string                      `json:"_id"`
	ProjectKey               string                      `json:"projectKey"`
	Key                      string                      `json:"key"`
	Name                     string                      `json:"name"`
	APIKey                   string                      `json:"apiKey"`
	MobileKey                string                      `json:"mobileKey"`
	Color                    string                      `json:"color"`
	DefaultTTL               int                         `json:"defaultTtl"`
	SecureMode               bool                        `json:"secureMode"`
	DefaultTrackEvents       bool                        `json:"defaultTrackEvents"`
	RequireComments          bool                        `json:"requireComments"`
	ConfirmChanges           bool                        `json:"confirmChanges"`
	Tags                     []string                    `json:"tags"`
	Critical                 bool                        `json:"critical"`
	ApprovalSettings         ApprovalSettings            `json:"approvalSettings"`
	ResourceApprovalSettings map[string]ApprovalSettings `json:"resourceApprovalSettings"`
	CreatedOn                int64                       `json:"createdOn"`
	// Version is the item version, for optimistic locking; not stored in the document.
	Version int64 `json:"-"`
}

var (
	keyPattern   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	colorPattern = regexp.MustCompile(`^[0-9A-Fa-f]{6}$`)
	tagPattern   = regexp.MustCompile(`^[A-Za-z0-9._:-]+$`)
)

// Limits of environment fields.
const (
	MaxKeyLength  = 256
	MaxNameLength = 256
	MaxTagLength  = 64
	MaxTags       = 50
	MaxDefaultTTL = 60 * 24 * 365
)

// ValidKey checks a project or environment key; field names it in the error.
func ValidKey(field, key string) error {
	switch {
	case key == "":
		return fault.New(fault.Invalid, "field %q is required", field)
	case len(key) > MaxKeyLength:
		return fault.New(fault.Invalid, "field %q must be at most %d characters", field, MaxKeyLength)
	case !keyPattern.MatchString(key):
		return fault.New(fault.Invalid, "field %q must start with a letter or digit and hold only letters, digits, '.', '_' and '-'", field)
	}
	return nil
}

// ValidName checks a display name.
func ValidName(field, name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return fault.New(fault.Invalid, "field %q must not be empty", field)
	case len(name) > MaxNameLength:
		return fault.New(fault.Invalid, "field %q must be at most %d characters", field, MaxNameLength)
	}
	return nil
}

// ValidTags checks a tag list.
func ValidTags(field string, tags []string) error {
	if len(tags) > MaxTags {
		return fault.New(fault.Invalid, "field %q holds %d tags, at most %d allowed", field, len(tags), MaxTags)
	}
	seen := map[string]bool{}
	for i, t := range tags {
		if len(t) == 0 || len(t) > MaxTagLength || !tagPattern.MatchString(t) {
			return fault.New(fault.Invalid, "field %q: tag %d (%q) must be 1 to %d letters, digits, '.', '_', ':' or '-'", field, i, t, MaxTagLength)
		}
		if seen[t] {
			return fault.New(fault.Invalid, "field %q: tag %q appears twice", field, t)
		}
		seen[t] = true
	}
	return nil
}

// validate checks every rule an environment must satisfy after any change.
// prefix starts every field name in errors (e.g. "environments[1].").
func (e *Environment) validate(prefix string) error {
	if err := ValidKey(prefix+"key", e.Key); err != nil {
		return err
	}
	if err := ValidName(prefix+"name", e.Name); err != nil {
		return err
	}
	if !colorPattern.MatchString(e.Color) {
		return fault.New(fault.Invalid, "field %q must be six hexadecimal characters without a leading '#', not %q", prefix+"color", e.Color)
	}
	if e.DefaultTTL < 0 || e.DefaultTTL > MaxDefaultTTL {
		return fault.New(fault.Invalid, "field %q must be between 0 and %d minutes", prefix+"defaultTtl", MaxDefaultTTL)
	}
	if err := ValidTags(prefix+"tags", e.Tags); err != nil {
		return err
	}
	if err := validApproval(prefix+"approvalSettings", e.ApprovalSettings); err != nil {
		return err
	}
	for kind, a := range e.ResourceApprovalSettings {
		if err := validApproval(prefix+"resourceApprovalSettings."+kind, a); err != nil {
			return err
		}
	}
	return nil
}

// validApproval checks one set of approval settings; field names where it sits.
func validApproval(field string, a ApprovalSettings) error {
	if a.MinNumApprovals < 1 || a.MinNumApprovals > 5 {
		return fault.New(fault.Invalid, "field %q must be between 1 and 5", field+".minNumApprovals")
	}
	return ValidTags(field+".requiredApprovalTags", a.RequiredApprovalTags)
}

// newSecret returns "<prefix>-<uuid v4>", the form of SDK and mobile keys.
func newSecret(prefix string) string { return prefix + "-" + uuid.NewString() }

// NewID returns a 24-hex-digit resource id.
func NewID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
