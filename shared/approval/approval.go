// Package approval holds approval requests: a semantic patch to one flag
// in one environment (or one change to an AI Config variation, see
// aiconfig.go), proposed by a member, reviewed by others and then
// applied (now, or at its execution date by the scheduler). It also gives
// the flag service the check that refuses direct changes in environments
// that require approvals.
package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/flagplane/flagplane/shared/aiconfig"
	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/jsondoc"
	"github.com/flagplane/flagplane/shared/member"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/segment"
	"github.com/flagplane/flagplane/shared/semanticpatch"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/team"
)

// Statuses of a request (status) and of its review (reviewStatus).
const (
	StatusPending   = "pending"
	StatusScheduled = "scheduled"
	StatusFailed    = "failed"
	StatusCompleted = "completed"

	ReviewPending  = "pending"
	ReviewApproved = "approved"
	ReviewDeclined = "declined"
)

// Review kinds.
const (
	KindApprove = "approve"
	KindDecline = "decline"
	KindComment = "comment"
)

// CollectionHref is the path of every approval request.
const CollectionHref = "/api/v2/approval-requests"

// Href is the path of one approval request.
func Href(id string) string { return CollectionHref + "/" + id }

// Review is one review of a request.
type Review struct {
	ID             string `json:"_id"`
	Kind           string `json:"kind"`
	CreationDate   int64  `json:"creationDate"`
	Comment        string `json:"comment,omitempty"`
	MemberID       string `json:"memberId,omitempty"`
	ServiceTokenID string `json:"serviceTokenId,omitempty"`
}

// Request is one approval request as stored.
type Request struct {
	ID           string `json:"_id"`
	CreationDate int64  `json:"creationDate"`
	ServiceKind  string `json:"serviceKind"`
	// RequestorID is the requesting member; a service token has none and
	// is named by RequestorServiceTokenID instead.
	RequestorID             string                      `json:"requestorId,omitempty"`
	RequestorServiceTokenID string                      `json:"requestorServiceTokenId,omitempty"`
	Description             string                      `json:"description"`
	Comment                 string                      `json:"comment,omitempty"`
	ReviewStatus            string                      `json:"reviewStatus"`
	AllReviews              []Review                    `json:"allReviews"`
	NotifyMemberIDs         []string                    `json:"notifyMemberIds"`
	NotifyTeamKeys          []string                    `json:"notifyTeamKeys"`
	AppliedDate             int64                       `json:"appliedDate,omitempty"`
	AppliedByMemberID       string                      `json:"appliedByMemberId,omitempty"`
	AppliedByServiceTokenID string                      `json:"appliedByServiceTokenId,omitempty"`
	Status                  string                      `json:"status"`
	FailureReason           string                      `json:"failureReason,omitempty"`
	Instructions            []semanticpatch.Instruction `json:"instructions"`
	ExecutionDate           int64                       `json:"executionDate,omitempty"`
	OperatingOnID           string                      `json:"operatingOnId"`
	ResourceID              string                      `json:"resourceId"`
	ProjectKey              string                      `json:"projectKey"`
	EnvironmentKey          string                      `json:"environmentKey"`
	FlagKey                 string                      `json:"flagKey"`
	// ResourceKind is aiconfig for a request on an AI Config (AIConfigKey
	// names it, FlagKey is empty), segment for one on a segment
	// (SegmentKey); empty for a flag, as requests made before AI Configs
	// are stored.
	ResourceKind      string                       `json:"resourceKind,omitempty"`
	AIConfigKey       string                       `json:"aiConfigKey,omitempty"`
	SegmentKey        string                       `json:"segmentKey,omitempty"`
	ApprovalSettings  environment.ApprovalSettings `json:"approvalSettings"`
	IntegrationConfig json.RawMessage              `json:"integrationConfig,omitempty"`
	// Version is the item version, shown as _version; not stored in the document.
	Version int64 `json:"-"`
}

func (r *Request) clone() *Request {
	c := *r
	c.AllReviews = slices.Clone(r.AllReviews)
	return &c
}

func (r *Request) put(c store.Cond) (store.Write, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return store.Write{}, fmt.Errorf("encode approval request: %w", err)
	}
	gpk, gsk := store.ApprovalRequestIndexKeys(r.ID)
	k := store.ApprovalRequestKey(r.ID)
	return store.Put(store.Item{PK: k.PK, SK: k.SK, GSI1PK: gpk, GSI1SK: gsk, Version: r.Version, Data: data}, c), nil
}

func decode(it store.Item) (*Request, error) {
	var r Request
	if err := json.Unmarshal(it.Data, &r); err != nil {
		return nil, fmt.Errorf("decode approval request %s: %w", it.PK, err)
	}
	r.Version = it.Version
	if r.AllReviews == nil {
		r.AllReviews = []Review{}
	}
	return &r, nil
}

// Service manages approval requests.
type Service struct {
	table    store.Table
	log      *audit.Log
	flags    *flag.Service
	envs     *environment.Service
	projects *project.Service
	members  *member.Service
	teams    *team.Service
	// aiconfigs, when set, lets requests act on AI Configs; segments on
	// segments (segment.go).
	aiconfigs *aiconfig.Service
	segments  *segment.Service
	now       func() time.Time
}

// NewService returns the approval request service and installs its check
// on the flag service.
func NewService(table store.Table, log *audit.Log, flags *flag.Service, envs *environment.Service, projects *project.Service,
	members *member.Service, teams *team.Service, now func() time.Time) *Service {
	s := &Service{table: table, log: log, flags: flags, envs: envs, projects: projects, members: members, teams: teams, now: now}
	flags.SetApprovalCheck(s.Check)
	return s
}

// Check refuses a direct change to f's targeting in envKey when the
// environment requires approvals, for every flag or for flags carrying
// one of its requiredApprovalTags (405 method_not_allowed).
func (s *Service) Check(ctx context.Context, projectKey, envKey string, f *flag.Flag) error {
	required, err := s.requires(ctx, projectKey, envKey, f.Tags, func(e *environment.Environment) (environment.ApprovalSettings, bool) {
		return e.ApprovalSettings, true
	})
	if err != nil || !required {
		return err
	}
	return fault.New(fault.MethodNotAllowed,
		"environment %q of project %q requires approval for changes to flag %q: an approval request is needed; create one with POST %s",
		envKey, projectKey, f.Key, CollectionHref)
}

// requires reports whether the settings settingsOf picks from envKey's
// environment require approval of a resource carrying tags: for every
// one, or for those carrying one of requiredApprovalTags. Never with the
// approvals feature off, nor when the environment is gone (the change
// answers its own 404).
func (s *Service) requires(ctx context.Context, projectKey, envKey string, tags []string,
	settingsOf func(*environment.Environment) (environment.ApprovalSettings, bool)) (bool, error) {
	if !s.envs.ApprovalsEnabled() {
		return false, nil
	}
	e, err := s.envs.Get(ctx, projectKey, envKey)
	if fault.Is(err, fault.NotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	a, ok := settingsOf(e)
	if !ok {
		return false, nil
	}
	return a.Required || slices.ContainsFunc(tags, func(t string) bool { return slices.Contains(a.RequiredApprovalTags, t) }), nil
}

// Input is the body of a create request.
type Input struct {
	ResourceID        *string         `json:"resourceId"`
	Description       *string         `json:"description"`
	Instructions      json.RawMessage `json:"instructions"`
	Comment           string          `json:"comment"`
	NotifyMemberIDs   []string        `json:"notifyMemberIds"`
	NotifyTeamKeys    []string        `json:"notifyTeamKeys"`
	IntegrationConfig json.RawMessage `json:"integrationConfig"`
	// ExecutionDate, Unix ms in the future (an integer or, as answers show
	// it, a string), schedules the change for when it is approved.
	ExecutionDate *jsondoc.Millis `json:"executionDate"`
}

// asInvalid turns an instruction that does not apply (422) into a 400: at
// creation a bad instruction is a bad request.
func asInvalid(err error) error {
	var se *semanticpatch.Error
	if errors.As(err, &se) && se.Code() == fault.PatchFailed {
		return fault.Wrap(err, fault.Invalid, "%s", se.Error())
	}
	return err
}

// Create validates in against the flag as it is now and stores a pending request.
func (s *Service) Create(ctx context.Context, in Input) (*Request, error) {
	if in.ResourceID == nil {
		return nil, fault.New(fault.Invalid, "field \"resourceId\" is required")
	}
	if in.Description == nil || strings.TrimSpace(*in.Description) == "" {
		return nil, fault.New(fault.Invalid, "field \"description\" is required")
	}
	if len(in.Instructions) == 0 || string(in.Instructions) == "null" {
		return nil, fault.New(fault.Invalid, "field \"instructions\" is required")
	}
	t, err := ParseTarget(*in.ResourceID)
	if err != nil {
		return nil, err
	}
	pk, ek, fk := t.ProjectKey, t.EnvironmentKey, t.Key
	sp, err := semanticpatch.Parse(append(append([]byte(`{"instructions":`), in.Instructions...), '}'))
	if err != nil {
		return nil, err
	}
	env, err := s.envs.Get(ctx, pk, ek)
	if err != nil {
		return nil, err
	}
	settings := env.ApprovalSettings
	switch t.Kind {
	case KindAIConfig:
		if err := s.checkAI(ctx, pk, t.Key, sp.Instructions); err != nil {
			return nil, err
		}
		if a, ok := env.ResourceApprovalSettings[KindAIConfig]; ok {
			settings = a
		}
	case KindSegment:
		if err := s.checkSegment(ctx, pk, ek, t.Key, sp.Instructions); err != nil {
			return nil, asInvalid(err)
		}
		if a, ok := env.ResourceApprovalSettings[KindSegment]; ok {
			settings = a
		}
	default:
		f, err := s.flags.Load(ctx, pk, fk)
		if err != nil {
			return nil, err
		}
		if err := s.validate(ctx, f, ek, sp.Instructions); err != nil {
			return nil, asInvalid(err)
		}
	}
	now := s.now()
	for i, id := range in.NotifyMemberIDs {
		if _, err := s.members.Get(ctx, id); err != nil {
			if fault.Is(err, fault.NotFound) {
				return nil, fault.New(fault.Invalid, "field \"notifyMemberIds[%d]\": member %q not found", i, id)
			}
			return nil, err
		}
	}
	for i, key := range in.NotifyTeamKeys {
		if _, err := s.teams.Get(ctx, key); err != nil {
			if fault.Is(err, fault.NotFound) {
				return nil, fault.New(fault.Invalid, "field \"notifyTeamKeys[%d]\": team %q not found", i, key)
			}
			return nil, err
		}
	}
	r := &Request{
		ID: environment.NewID(), CreationDate: now.UnixMilli(), ServiceKind: environment.ServiceKind,
		Description: *in.Description, Comment: in.Comment, ReviewStatus: ReviewPending, AllReviews: []Review{},
		NotifyMemberIDs: nonNil(in.NotifyMemberIDs), NotifyTeamKeys: nonNil(in.NotifyTeamKeys), Status: StatusPending,
		Instructions: sp.Instructions, OperatingOnID: fk, ResourceID: *in.ResourceID, ProjectKey: pk, EnvironmentKey: ek,
		FlagKey: fk, ApprovalSettings: settings, Version: 1,
	}
	switch t.Kind {
	case KindAIConfig:
		r.FlagKey, r.ResourceKind, r.AIConfigKey = "", KindAIConfig, t.Key
	case KindSegment:
		r.FlagKey, r.ResourceKind, r.SegmentKey = "", KindSegment, t.Key
	}
	if len(in.IntegrationConfig) > 0 && string(in.IntegrationConfig) != "null" {
		r.IntegrationConfig = in.IntegrationConfig
	}
	if in.ExecutionDate != nil {
		if int64(*in.ExecutionDate) <= now.UnixMilli() {
			return nil, fault.New(fault.Invalid, "field \"executionDate\" must be in the future (Unix ms), not %d", *in.ExecutionDate)
		}
		r.ExecutionDate = int64(*in.ExecutionDate)
	}
	if p, ok := identity.From(ctx); ok {
		if p.ServiceToken {
			r.RequestorServiceTokenID = p.TokenID
		} else {
			r.RequestorID = p.MemberID
		}
	}
	put, err := r.put(store.IfNotExists())
	if err != nil {
		return nil, err
	}
	if _, err := s.log.Commit(ctx, s.change(r, []store.Write{put}, "createApprovalRequest", "requested approval of a change to", in.Comment, nil)); err != nil {
		return nil, err
	}
	return r, nil
}

func (s *Service) change(r *Request, writes []store.Write, action, verb, comment string, previous *Request) audit.Change {
	c := audit.Change{
		Writes: writes, Kind: "approvalRequest", Resource: r.ResourceID, Actions: []string{action},
		Name: r.Key(), Href: Href(r.ID), TitleVerb: verb, Comment: comment,
		Parent: &audit.Parent{Name: r.ProjectKey, Resource: "proj/" + r.ProjectKey, Href: project.Href(r.ProjectKey)}, Current: r,
	}
	if previous != nil {
		c.Previous = previous
	}
	return c
}

// Key is the key of the flag, AI Config or segment the request acts on.
func (r *Request) Key() string {
	switch r.ResourceKind {
	case KindAIConfig:
		return r.AIConfigKey
	case KindSegment:
		return r.SegmentKey
	}
	return r.FlagKey
}

// Kind is the kind of resource the request acts on: flag, aiconfig or segment.
func (r *Request) Kind() string {
	if r.ResourceKind == KindAIConfig || r.ResourceKind == KindSegment {
		return r.ResourceKind
	}
	return KindFlag
}

// validate runs the instructions on a copy of f.
func (s *Service) validate(ctx context.Context, f *flag.Flag, envKey string, ins []semanticpatch.Instruction) error {
	if _, err := flag.InstructionActions(envKey, ins); err != nil {
		return err
	}
	var others flag.Others
	if flag.NeedsOthers(ins) {
		var err error
		if others, err = s.flags.Others(ctx, f.ProjectKey); err != nil {
			return err
		}
	}
	return flag.Validate(f, envKey, ins, s.now(), others)
}

// Conflict is an instruction that no longer applies to the flag as it is.
type Conflict struct {
	Instruction semanticpatch.Instruction `json:"instruction"`
	Reason      string                    `json:"reason"`
}

// Conflicts runs a request not yet applied against the flag as it is now:
// the first instruction that would fail, with the reason (instructions
// after it depend on it and are not judged). Applied or failed requests
// have none. flags caches flags by project and key across calls; nil is fine.
func (s *Service) Conflicts(ctx context.Context, r *Request, flags map[string]*flag.Flag) ([]Conflict, error) {
	out := []Conflict{}
	if r.Status != StatusPending && r.Status != StatusScheduled {
		return out, nil
	}
	switch r.Kind() {
	case KindAIConfig:
		return s.aiConflicts(ctx, r)
	case KindSegment:
		return s.segmentConflicts(ctx, r)
	}
	k := r.ProjectKey + "/" + r.FlagKey
	f, ok := flags[k]
	if !ok {
		var err error
		f, err = s.flags.Load(ctx, r.ProjectKey, r.FlagKey)
		if fault.Is(err, fault.NotFound) {
			f = nil
		} else if err != nil {
			return nil, err
		}
		if flags != nil {
			flags[k] = f
		}
	}
	if f == nil {
		return append(out, Conflict{Instruction: r.Instructions[0], Reason: fmt.Sprintf("flag %q no longer exists in project %q", r.FlagKey, r.ProjectKey)}), nil
	}
	err := s.validate(ctx, f, r.EnvironmentKey, r.Instructions)
	var se *semanticpatch.Error
	if errors.As(err, &se) && se.Index >= 0 && se.Index < len(r.Instructions) {
		return append(out, Conflict{Instruction: r.Instructions[se.Index], Reason: se.Reason()}), nil
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Get returns one request.
func (s *Service) Get(ctx context.Context, id string) (*Request, error) {
	what := fmt.Sprintf("approval request %q", id)
	if id == "" || strings.ContainsAny(id, "#/") {
		return nil, fault.New(fault.NotFound, "%s not found", what)
	}
	return record.Load(ctx, s.table, store.ApprovalRequestKey(id), what, decode)
}

// All returns every request, newest first.
func (s *Service) All(ctx context.Context) ([]*Request, error) {
	all, err := record.All(ctx, s.table, store.Query{Index: store.IndexGSI1, PK: store.ApprovalRequestsIndexPK}, "approval requests", decode)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].CreationDate != all[j].CreationDate {
			return all[i].CreationDate > all[j].CreationDate
		}
		return all[i].ID > all[j].ID
	})
	return all, nil
}

// List returns the requests filter selects, newest first.
func (s *Service) List(ctx context.Context, filter string) ([]*Request, error) {
	match, err := ParseFilter(filter)
	if err != nil {
		return nil, err
	}
	all, err := s.All(ctx)
	if err != nil {
		return nil, err
	}
	kept := all[:0]
	for _, r := range all {
		if match(r) {
			kept = append(kept, r)
		}
	}
	return kept, nil
}

// Delete removes a request not yet applied (pending or scheduled); an
// applied or failed request is history and stays (400).
func (s *Service) Delete(ctx context.Context, id string) error {
	r, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	if r.Status != StatusPending && r.Status != StatusScheduled {
		return fault.New(fault.Invalid, "approval request %q is %s; only a pending or scheduled request can be deleted", id, r.Status)
	}
	c := s.change(r, []store.Write{store.Delete(store.ApprovalRequestKey(id), store.IfVersion(r.Version))}, "deleteApprovalRequest", "deleted the approval request for", "", nil)
	c.Previous, c.Current = r, nil
	_, err = s.log.Commit(ctx, c)
	if errors.Is(err, store.ErrConditionFailed) {
		return fault.Wrap(err, fault.Conflict, "approval request %q changed while it was deleted; read it again", id)
	}
	return err
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// splitTop splits s at commas outside brackets and quotes.
func splitTop(s string) []string {
	var out []string
	depth, inQuote, start := 0, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			inQuote = !inQuote
		case inQuote:
		case c == '[':
			depth++
		case c == ']':
			depth--
		case c == ',' && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// listValue reads an anyOf value: a JSON array of strings, or a bare
// bracketed list of (optionally quoted) words.
func listValue(raw string) ([]string, bool) {
	raw = strings.TrimSpace(raw)
	if !strings.HasPrefix(raw, "[") || !strings.HasSuffix(raw, "]") {
		return nil, false
	}
	var list []string
	if json.Unmarshal([]byte(raw), &list) == nil {
		return list, true
	}
	for _, w := range strings.Split(raw[1:len(raw)-1], ",") {
		if w = strings.Trim(strings.TrimSpace(w), `"'`); w != "" {
			list = append(list, w)
		}
	}
	return list, true
}

// ParseFilter reads the list filter: comma-separated `field operator
// value` entries, all of which must hold. Fields and operators:
// notifyMemberIds anyOf [..], requestorId equals x, resourceId equals x,
// resourceKind equals flag|segment|aiConfig, reviewStatus anyOf [..],
// status anyOf [..], projectKey equals x.
func ParseFilter(raw string) (func(*Request) bool, error) {
	ops := map[string]string{"notifyMemberIds": "anyOf", "requestorId": "equals", "resourceId": "equals", "resourceKind": "equals",
		"reviewStatus": "anyOf", "status": "anyOf", "projectKey": "equals"}
	var checks []func(*Request) bool
	if strings.TrimSpace(raw) == "" {
		return func(*Request) bool { return true }, nil
	}
	for _, entry := range splitTop(raw) {
		entry = strings.TrimSpace(entry)
		field, rest, _ := strings.Cut(entry, " ")
		op, value, _ := strings.Cut(strings.TrimSpace(rest), " ")
		value = strings.TrimSpace(value)
		want, known := ops[field]
		if !known {
			return nil, fault.New(fault.Invalid, "filter field %q is not supported; use one of notifyMemberIds, requestorId, resourceId, resourceKind, reviewStatus, status, projectKey", field)
		}
		if op != want || value == "" {
			return nil, fault.New(fault.Invalid, "filter %q must have the form `%s %s <value>`", entry, field, want)
		}
		if want == "anyOf" {
			list, ok := listValue(value)
			if !ok {
				return nil, fault.New(fault.Invalid, "filter %q: the value of anyOf must be a list such as [\"a\",\"b\"]", entry)
			}
			switch field {
			case "notifyMemberIds":
				checks = append(checks, func(r *Request) bool {
					return slices.ContainsFunc(r.NotifyMemberIDs, func(id string) bool { return slices.Contains(list, id) })
				})
			case "reviewStatus":
				checks = append(checks, func(r *Request) bool { return slices.Contains(list, r.ReviewStatus) })
			case "status":
				checks = append(checks, func(r *Request) bool { return slices.Contains(list, r.Status) })
			}
			continue
		}
		value = strings.Trim(value, `"`)
		switch field {
		case "requestorId":
			checks = append(checks, func(r *Request) bool { return r.RequestorID == value || r.RequestorServiceTokenID == value })
		case "resourceId":
			checks = append(checks, func(r *Request) bool { return r.ResourceID == value })
		case "projectKey":
			checks = append(checks, func(r *Request) bool { return r.ProjectKey == value })
		case "resourceKind":
			if value != "flag" && value != "segment" && value != "aiConfig" {
				return nil, fault.New(fault.Invalid, "filter resourceKind must be flag, segment or aiConfig, not %q", value)
			}
			kind := strings.ToLower(value) // aiConfig in the filter, aiconfig in resourceId
			checks = append(checks, func(r *Request) bool { return r.Kind() == kind })
		}
	}
	return func(r *Request) bool {
		for _, c := range checks {
			if !c(r) {
				return false
			}
		}
		return true
	}, nil
}
