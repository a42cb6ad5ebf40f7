package endpoints

import (
	"net/http"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/reps"
)

// EnvironmentRep is an environment as the API shows it, here and where
// another group embeds one (an insight group's expanded environment).
type EnvironmentRep struct {
	Links                    api.Links                               `json:"_links"`
	ID                       string                                  `json:"_id"`
	Key                      string                                  `json:"key"`
	Name                     string                                  `json:"name"`
	APIKey                   string                                  `json:"apiKey"`
	MobileKey                string                                  `json:"mobileKey"`
	Color                    string                                  `json:"color"`
	DefaultTTL               int                                     `json:"defaultTtl"`
	SecureMode               bool                                    `json:"secureMode"`
	DefaultTrackEvents       bool                                    `json:"defaultTrackEvents"`
	RequireComments          bool                                    `json:"requireComments"`
	ConfirmChanges           bool                                    `json:"confirmChanges"`
	Tags                     []string                                `json:"tags"`
	ApprovalSettings         *environment.ApprovalSettings           `json:"approvalSettings,omitzero"`
	ResourceApprovalSettings map[string]environment.ApprovalSettings `json:"resourceApprovalSettings,omitzero"`
	Critical                 bool                                    `json:"critical"`
	Access                   policy.Access                           `json:"_access"`
}

// NewEnvironmentRep shows e to the request's caller, with its approval
// settings when approvals are enabled.
func NewEnvironmentRep(r *http.Request, e *environment.Environment, approvals bool) EnvironmentRep {
	rep := EnvironmentRep{
		Access: reps.Access(r, policy.NewResource("proj", e.ProjectKey).Child("env", e.Key, e.Tags...), environment.Actions),
		Links:  api.Self(e.Href()), ID: e.ID, Key: e.Key, Name: e.Name, APIKey: e.APIKey, MobileKey: e.MobileKey,
		Color: e.Color, DefaultTTL: e.DefaultTTL, SecureMode: e.SecureMode, DefaultTrackEvents: e.DefaultTrackEvents,
		RequireComments: e.RequireComments, ConfirmChanges: e.ConfirmChanges, Tags: e.Tags, Critical: e.Critical,
	}
	if rep.Tags == nil {
		rep.Tags = []string{} // the reference requires the array
	}
	if approvals {
		a := e.ApprovalSettings
		rep.ApprovalSettings = &a
		rep.ResourceApprovalSettings = e.ResourceApprovalSettings
		if rep.ResourceApprovalSettings == nil {
			rep.ResourceApprovalSettings = map[string]environment.ApprovalSettings{}
		}
	}
	return rep
}

// environmentVisible keeps the environments whose GET the caller of r may make.
func environmentVisible(r *http.Request) func(*environment.Environment) bool {
	return func(e *environment.Environment) bool {
		return api.MayView(r, policy.NewResource("proj", e.ProjectKey).Child("env", e.Key), identity.ViewAction)
	}
}

type environmentsRep struct {
	Links      api.Links        `json:"_links"`
	TotalCount int64            `json:"totalCount"`
	Items      []EnvironmentRep `json:"items"`
}

func environmentHandlers(s app.Services) map[string]api.Handler {
	envs := s.Environments
	approvals := envs.ApprovalsEnabled()
	return map[string]api.Handler{
		"getEnvironmentsByProject": func(w http.ResponseWriter, r *http.Request) error {
			q := r.URL.Query()
			offset, limit, err := api.OffsetParams(q, 20, api.MaxPage)
			if err != nil {
				return err
			}
			pk := r.PathValue("projectKey")
			res, err := envs.List(r.Context(), pk, environment.ListQuery{Filter: q.Get("filter"), Sort: q.Get("sort"), Offset: offset, Limit: limit,
				Visible: environmentVisible(r)})
			if err != nil {
				return err
			}
			out := environmentsRep{TotalCount: res.TotalCount, Items: make([]EnvironmentRep, 0, len(res.Items)),
				Links: api.OffsetLinks("/api/v2/projects/"+pk+"/environments", q, offset, limit, res.TotalCount)}
			for _, e := range res.Items {
				out.Items = append(out.Items, NewEnvironmentRep(r, e, approvals))
			}
			api.WriteJSON(w, http.StatusOK, out)
			return nil
		},
		"postEnvironment": func(w http.ResponseWriter, r *http.Request) error {
			var in environment.Input
			if err := api.Decode(w, r, &in); err != nil {
				return err
			}
			e, err := envs.Create(r.Context(), r.PathValue("projectKey"), in)
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusCreated, NewEnvironmentRep(r, e, approvals))
			return nil
		},
		"getEnvironment": func(w http.ResponseWriter, r *http.Request) error {
			e, err := envs.Get(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"))
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusOK, NewEnvironmentRep(r, e, approvals))
			return nil
		},
		"patchEnvironment": func(w http.ResponseWriter, r *http.Request) error {
			p, err := api.ReadJSONPatch(w, r, "an environment")
			if err != nil {
				return err
			}
			e, err := envs.Patch(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"), p)
			if err != nil {
				return err
			}
			api.WriteJSON(w, http.StatusOK, NewEnvironmentRep(r, e, approvals))
			return nil
		},
		"resetEnvironmentSDKKey":    resetKey(envs, environment.SDKKey, approvals),
		"resetEnvironmentMobileKey": resetKey(envs, environment.MobileKey, approvals),
		"deleteEnvironment": func(w http.ResponseWriter, r *http.Request) error {
			if err := envs.Delete(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey")); err != nil {
				return err
			}
			w.WriteHeader(http.StatusNoContent)
			return nil
		},
	}
}

// resetKey replaces one key. The reference's expiry parameter (keep the
// old SDK key working for a while) needs an SDK-serving side, which
// flagplane does not have, so it is refused rather than ignored.
func resetKey(envs *environment.Service, kind environment.KeyKind, approvals bool) api.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		if r.URL.Query().Has("expiry") {
			return fault.New(fault.Invalid, "query parameter \"expiry\" is not supported: flagplane serves no SDKs, so an old key cannot keep working; the old key is replaced at once")
		}
		e, err := envs.ResetKey(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"), kind)
		if err != nil {
			return err
		}
		api.WriteJSON(w, http.StatusOK, NewEnvironmentRep(r, e, approvals))
		return nil
	}
}
