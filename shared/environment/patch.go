package environment

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
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
	// resourceApprovalSettings holds approval settings per resource kind;
	// only aiconfig and segment are editable (see resourceApprovalKinds).
	"resourceApprovalSettings": "updateApprovalSettings",
}

// resourceApprovalKinds are the resource kinds whose approval settings a
// patch may set under /resourceApprovalSettings/<kind>: AI Configs', and
// segments' (changes to segments go through approval requests).
var resourceApprovalKinds = map[string]bool{"aiconfig": true, "segment": true}

// Actions are the actions `_access` reports on an environment, decided on
// proj/<p>:env/<key>. It also reports CreateSegment, decided on
// proj/<p>:env/<key>:segment/* as a segment's POST checks it (with the new
// key in place of *).
var Actions = []string{"deleteEnvironment", "updateName", "updateColor", "updateTtl", "updateSecureMode",
	"updateDefaultTrackEvents", "updateRequireComments", "updateConfirmChanges", "updateTags", "updateCritical",
	"updateApprovalSettings", "updateApiKey", "updateMobileKey"}

// CreateSegment is the create inside an environment its `_access` reports.
const CreateSegment = "createSegment"

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
	for _, path := range p.Touched() {
		if _, _, err := approvalSetting(path); err != nil {
			return nil, err
		}
	}
	return actions, nil
}

// approvalSetting returns, for a path into approval settings, the settings
// object it is in ("approvalSettings" or "resourceApprovalSettings.<kind>")
// and the setting, refusing one that is not editable; "" for other paths.
func approvalSetting(path string) (owner, setting string, err error) {
	seg := patch.Segments(path)
	owner = seg[0]
	switch seg[0] {
	case "approvalSettings":
		seg = seg[1:]
	case "resourceApprovalSettings":
		if len(seg) < 2 || !resourceApprovalKinds[seg[1]] {
			return "", "", fault.New(fault.Invalid, "path %q cannot be patched: resourceApprovalSettings takes only the kinds aiconfig and segment, as /resourceApprovalSettings/<kind>/<setting>", path)
		}
		owner, seg = "resourceApprovalSettings."+seg[1], seg[2:]
	default:
		return "", "", nil
	}
	if len(seg) < 1 || !approvalEditable[seg[0]] {
		return "", "", fault.New(fault.Invalid, "path %q cannot be patched: of the approval settings only canReviewOwnRequest, canApplyDeclinedChanges, minNumApprovals, required and requiredApprovalTags are editable", path)
	}
	return owner, seg[0], nil
}

// requiredWithTags refuses a patch that changes both required and
// requiredApprovalTags of one settings object. It is judged on what the
// patch changes (after patch.WithoutNoOps): LaunchDarkly's Terraform
// provider sends both on every update, one of them as it read it.
func requiredWithTags(p patch.Patch) error {
	touched := map[string]map[string]bool{}
	for _, path := range p.Touched() {
		owner, setting, err := approvalSetting(path)
		if err != nil {
			return err
		}
		if setting == "" {
			continue
		}
		if touched[owner] == nil {
			touched[owner] = map[string]bool{}
		}
		touched[owner][setting] = true
	}
	for owner, fields := range touched {
		if fields["required"] && fields["requiredApprovalTags"] {
			return fault.New(fault.Invalid, "%s.required and %s.requiredApprovalTags cannot be patched in one request: require approvals for every change, or only for resources with the given tags", owner, owner)
		}
	}
	return nil
}

// withResourceKinds returns e, or a copy of it whose resourceApprovalSettings
// holds the default settings for every kind p touches that e has none of,
// so a path such as /resourceApprovalSettings/aiconfig/required applies.
func withResourceKinds(e *Environment, p patch.Patch) *Environment {
	c := e
	for _, path := range p.Touched() {
		seg := patch.Segments(path)
		if len(seg) < 3 || seg[0] != "resourceApprovalSettings" {
			continue
		}
		if _, ok := c.ResourceApprovalSettings[seg[1]]; ok {
			continue
		}
		if c == e {
			cp := *e
			cp.ResourceApprovalSettings = maps.Clone(e.ResourceApprovalSettings)
			if cp.ResourceApprovalSettings == nil {
				cp.ResourceApprovalSettings = map[string]ApprovalSettings{}
			}
			c = &cp
		}
		c.ResourceApprovalSettings[seg[1]] = DefaultApprovalSettings()
	}
	return c
}

// checkPaths adds to PatchActions what depends on the service's settings.
func (s *Service) checkPaths(p patch.Patch) error {
	actions, err := PatchActions(p)
	if err != nil {
		return err
	}
	if err := requiredWithTags(p); err != nil {
		return err
	}
	if !s.approvals && slices.Contains(actions, "updateApprovalSettings") {
		return fault.New(fault.Invalid, "approval settings cannot be patched: the approvals feature is turned off")
	}
	return nil
}

// Patch applies a JSON patch to an environment, validates the result and
// stores it on the version it was read at (409 when another write won).
// A replace that changes nothing is dropped first (patch.WithoutNoOps), so
// a read-only approval setting sent back as read is no error. Nothing is
// stored unless the whole patch applies and the result is valid.
func (s *Service) Patch(ctx context.Context, projectKey, envKey string, p patch.Patch) (*Environment, error) {
	old, err := s.Get(ctx, projectKey, envKey)
	if err != nil {
		return nil, err
	}
	doc := withResourceKinds(old, p)
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encode environment %q to patch: %w", envKey, err)
	}
	p = p.WithoutNoOps(raw)
	if err := s.checkPaths(p); err != nil {
		return nil, err
	}
	var next Environment
	if err := p.ApplyTo(doc, &next); err != nil {
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
