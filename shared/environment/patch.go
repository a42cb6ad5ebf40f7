package environment

import (
	"context"
	"fmt"
	"slices"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/store"
)

// patchable maps each top-level field a patch may touch to the action it performs.
var patchable = map[string]string{
	"name":               "updateName",
	"color":              "updateColor",
	"defaultTtl":         "updateTtl",
	"secureMode":         "updateSecureMode",
	"defaultTrackEvents": "updateDefaultTrackEvents",
	"requireComments":    "updateRequireComments",
	"confirmChanges":     "updateConfirmChanges",
	"tags":               "updateTags",
	"critical":           "updateCritical",
	"approvalSettings":   "updateApprovalSettings",
}

// Actions are the actions `_access` reports on an environment.
var Actions = []string{"deleteEnvironment", "updateName", "updateColor", "updateTtl", "updateSecureMode",
	"updateDefaultTrackEvents", "updateRequireComments", "updateConfirmChanges", "updateTags", "updateCritical",
	"updateApprovalSettings", "updateApiKey", "updateMobileKey"}

// approvalEditable are the only approval settings a client may change.
var approvalEditable = map[string]bool{
	"canReviewOwnRequest":     true,
	"canApplyDeclinedChanges": true,
	"minNumApprovals":         true,
	"required":                true,
	"requiredApprovalTags":    true,
}

// PatchActions returns the actions a JSON patch of an environment
// performs, refusing paths outside the editable fields, and approval
// settings other than the editable five.
func PatchActions(p patch.Patch) ([]string, error) {
	actions, err := p.Actions(patchable, "an environment")
	if err != nil {
		return nil, err
	}
	touchedApproval := map[string]bool{}
	for _, path := range p.Touched() {
		seg := patch.Segments(path)
		if seg[0] != "approvalSettings" {
			continue
		}
		if len(seg) < 2 || !approvalEditable[seg[1]] {
			return nil, fault.New(fault.Invalid, "path %q cannot be patched: of the approval settings only canReviewOwnRequest, canApplyDeclinedChanges, minNumApprovals, required and requiredApprovalTags are editable", path)
		}
		touchedApproval[seg[1]] = true
	}
	if touchedApproval["required"] && touchedApproval["requiredApprovalTags"] {
		return nil, fault.New(fault.Invalid, "approvalSettings.required and approvalSettings.requiredApprovalTags cannot be patched in one request: require approvals for every flag, or only for flags with the given tags")
	}
	return actions, nil
}

// checkPaths adds to PatchActions what depends on the service's settings.
func (s *Service) checkPaths(p patch.Patch) error {
	actions, err := PatchActions(p)
	if err != nil {
		return err
	}
	if !s.approvals && slices.Contains(actions, "updateApprovalSettings") {
		return fault.New(fault.Invalid, "approval settings cannot be patched: the approvals feature is turned off")
	}
	return nil
}

// Patch applies a JSON patch to an environment, validates the result and
// stores it on the version it was read at (409 when another write won).
func (s *Service) Patch(ctx context.Context, projectKey, envKey string, p patch.Patch) (*Environment, error) {
	if err := s.checkPaths(p); err != nil {
		return nil, err
	}
	old, err := s.Get(ctx, projectKey, envKey)
	if err != nil {
		return nil, err
	}
	var next Environment
	if err := p.ApplyTo(old, &next); err != nil {
		return nil, err
	}
	if next.Tags == nil {
		next.Tags = []string{}
	}
	if next.ApprovalSettings.RequiredApprovalTags == nil {
		next.ApprovalSettings.RequiredApprovalTags = []string{}
	}
	if err := next.validate(""); err != nil {
		return nil, err
	}
	actions := patch.ChangedFields(old, &next, patchable)
	if len(actions) == 0 {
		return old, nil
	}
	next.Version = old.Version + 1
	put, err := next.Put(store.IfVersion(old.Version))
	if err != nil {
		return nil, err
	}
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: []store.Write{put}, Kind: "environment", Resource: next.Resource(), Actions: actions,
		Name: next.Name, Href: next.Href(), TitleVerb: "updated the environment", Comment: p.Comment,
		Parent: parent(projectKey), Previous: old.redacted(), Current: next.redacted(), Delta: p.Raw,
		Conflict: fmt.Sprintf("environment %q was changed by another request; read it again and retry", envKey),
	})
	if err != nil {
		return nil, err
	}
	return &next, nil
}

// KeyKind names one of an environment's two SDK credentials.
type KeyKind string

const (
	SDKKey    KeyKind = "sdk"
	MobileKey KeyKind = "mob"
)

// ResetKey replaces the environment's SDK or mobile key with a new one. The
// old key stops being the environment's at once.
func (s *Service) ResetKey(ctx context.Context, projectKey, envKey string, kind KeyKind) (*Environment, error) {
	old, err := s.Get(ctx, projectKey, envKey)
	if err != nil {
		return nil, err
	}
	next := *old
	action, cred := "updateApiKey", ServerCredential
	if kind == MobileKey {
		next.MobileKey, action, cred = newSecret("mob"), "updateMobileKey", MobileCredential
	} else {
		next.APIKey = newSecret("sdk")
	}
	next.Version = old.Version + 1
	put, err := next.Put(store.IfVersion(old.Version))
	if err != nil {
		return nil, err
	}
	// The new secret's credential item; the old one stops resolving at once, as the environment no longer carries it.
	creds, err := next.CredentialWrites(cred)
	if err != nil {
		return nil, err
	}
	_, err = s.log.Commit(ctx, audit.Change{
		Writes: append([]store.Write{put}, creds...), Kind: "environment", Resource: next.Resource(), Actions: []string{action},
		Name: next.Name, Href: next.Href(), TitleVerb: "reset a key of the environment", Parent: parent(projectKey),
		Previous: old.redacted(), Current: next.redacted(),
		Conflict: fmt.Sprintf("environment %q was changed by another request; try again", envKey),
	})
	if err != nil {
		return nil, err
	}
	return &next, nil
}

// redacted is the environment without its secrets, for audit entries.
func (e *Environment) redacted() *Environment {
	c := *e
	c.APIKey, c.MobileKey = "", ""
	return &c
}
