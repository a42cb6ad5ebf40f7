package featurestoreapi

import (
	"net/http"
	"sync"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/featurestore"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/policy"
)

// maxChecks bounds the store checks one list runs at once.
const maxChecks = 8

// patchSubject names what a semantic patch is refused for.
const patchSubject = "this resource"

// configRep is a configuration as the API shows it: config secrets masked.
type configRep struct {
	Links          api.Links      `json:"_links"`
	ID             string         `json:"_id"`
	IntegrationKey string         `json:"integrationKey"`
	ProjectKey     string         `json:"projectKey"`
	EnvironmentKey string         `json:"environmentKey"`
	Config         map[string]any `json:"config"`
	On             bool           `json:"on"`
	Tags           []string       `json:"tags"`
	Name           string         `json:"name"`
	Version        int            `json:"version"`
	Access         policy.Access  `json:"_access"`
	Status         any            `json:"_status"`
}

func newRep(r *http.Request, c *featurestore.Config, status any) configRep {
	m := c.Masked()
	env := "/api/v2/projects/" + c.ProjectKey + "/environments/" + c.EnvironmentKey
	parent := "/api/v2/integration-capabilities/featureStore/" + c.ProjectKey + "/" + c.EnvironmentKey
	if c.Capability == featurestore.BigSegmentStore {
		parent = "/api/v2/integration-capabilities/big-segment-store"
	}
	p, _ := identity.From(r.Context())
	res := resourceOf(c)
	return configRep{
		Links: api.Links{"self": api.JSONLink(c.Href()), "parent": api.JSONLink(parent),
			"project": api.JSONLink("/api/v2/projects/" + c.ProjectKey), "environment": api.JSONLink(env)},
		ID: c.ID, IntegrationKey: c.IntegrationKey, ProjectKey: c.ProjectKey, EnvironmentKey: c.EnvironmentKey,
		Config: m.Config, On: c.On, Tags: m.Tags, Name: c.Name, Version: c.Version,
		Access: p.Access(res, featurestore.Actions), Status: status,
	}
}

// resourceOf is the configuration's own resource, which its GET names:
// proj/<p>:env/<e>:integration/<integrationKey>/<id>.
func resourceOf(c *featurestore.Config) policy.Resource {
	return policy.NewResource("proj", c.ProjectKey).Child("env", c.EnvironmentKey).Child("integration", c.IntegrationKey+"/"+c.ID)
}

// visible keeps the configurations whose GET the caller may make.
func visible(r *http.Request, all []*featurestore.Config) []*featurestore.Config {
	out := all[:0:0]
	for _, c := range all {
		if api.MayView(r, resourceOf(c), identity.ViewAction) {
			out = append(out, c)
		}
	}
	return out
}

type collectionRep struct {
	Links api.Links   `json:"_links"`
	Items []configRep `json:"items"`
}

// pathArgs are the path's keys: project, environment, store, id.
func pathArgs(r *http.Request, idName string) (string, string, string, string) {
	return r.PathValue("projectKey"), r.PathValue("environmentKey"), r.PathValue("integrationKey"), r.PathValue(idName)
}

// deliveryHandlers serve the delivery-configurations group: feature store
// configurations, each shown with its store's sync status.
type deliveryHandlers struct {
	s    *featurestore.Service
	envs *environment.Service
}

func (h deliveryHandlers) rep(r *http.Request, cfg *featurestore.Config) (configRep, error) {
	st, err := h.s.Status(r.Context(), cfg.ID)
	if err != nil {
		return configRep{}, err
	}
	return newRep(r, cfg, st), nil
}

// list writes the configurations the caller may read, of one environment
// when proj is not empty (which must then exist), else of all.
func (h deliveryHandlers) list(w http.ResponseWriter, r *http.Request, proj, env string, links api.Links) error {
	if proj != "" {
		if _, err := h.envs.Get(r.Context(), proj, env); err != nil {
			return err
		}
	}
	all, err := h.s.List(r.Context(), featurestore.FeatureStore, proj, env)
	if err != nil {
		return err
	}
	all = visible(r, all)
	out := collectionRep{Links: links, Items: []configRep{}}
	for _, cfg := range all {
		item, err := h.rep(r, cfg)
		if err != nil {
			return err
		}
		out.Items = append(out.Items, item)
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h deliveryHandlers) getIntegrationDeliveryConfigurations(w http.ResponseWriter, r *http.Request) error {
	return h.list(w, r, "", "", api.Self("/api/v2/integration-capabilities/featureStore"))
}

func (h deliveryHandlers) getIntegrationDeliveryConfigurationByEnvironment(w http.ResponseWriter, r *http.Request) error {
	proj, env := r.PathValue("projectKey"), r.PathValue("environmentKey")
	return h.list(w, r, proj, env, api.Links{
		"self":   api.JSONLink("/api/v2/integration-capabilities/featureStore/" + proj + "/" + env),
		"parent": api.JSONLink("/api/v2/integration-capabilities/featureStore")})
}

func (h deliveryHandlers) createIntegrationDeliveryConfiguration(w http.ResponseWriter, r *http.Request) error {
	return create(w, r, h.s, featurestore.FeatureStore, h.rep)
}

func (h deliveryHandlers) getIntegrationDeliveryConfigurationByID(w http.ResponseWriter, r *http.Request) error {
	return getOne(w, r, h.s, featurestore.FeatureStore, "id", h.rep)
}

func (h deliveryHandlers) patchIntegrationDeliveryConfiguration(w http.ResponseWriter, r *http.Request) error {
	return patchOne(w, r, h.s, featurestore.FeatureStore, "id", h.rep)
}

func (h deliveryHandlers) deleteIntegrationDeliveryConfiguration(w http.ResponseWriter, r *http.Request) error {
	return deleteOne(w, r, h.s, featurestore.FeatureStore, "id")
}

// validateIntegrationDeliveryConfiguration checks that the store answers,
// with the configuration as stored.
func (h deliveryHandlers) validateIntegrationDeliveryConfiguration(w http.ResponseWriter, r *http.Request) error {
	proj, env, key, id := pathArgs(r, "id")
	cfg, err := h.s.Get(r.Context(), featurestore.FeatureStore, proj, env, key, id)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, h.s.Validate(r.Context(), cfg))
	return nil
}

// bigSegmentHandlers serve the big-segments group: big segment store
// configurations, each shown with its store's status, which checks it.
type bigSegmentHandlers struct {
	s *featurestore.Service
}

func (h bigSegmentHandlers) rep(r *http.Request, cfg *featurestore.Config) (configRep, error) {
	st, err := h.s.BigSegmentStatus(r.Context(), cfg)
	if err != nil {
		return configRep{}, err
	}
	return newRep(r, cfg, st), nil
}

func (h bigSegmentHandlers) getBigSegmentStoreIntegrations(w http.ResponseWriter, r *http.Request) error {
	all, err := h.s.List(r.Context(), featurestore.BigSegmentStore, "", "")
	if err != nil {
		return err
	}
	all = visible(r, all)
	out := collectionRep{Links: api.Self("/api/v2/integration-capabilities/big-segment-store"), Items: make([]configRep, len(all))}
	// Each status checks its store: in parallel, so a list costs one check's time.
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	slots := make(chan struct{}, maxChecks)
	for i, cfg := range all {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			out.Items[i], errs[i] = h.rep(r, cfg)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h bigSegmentHandlers) createBigSegmentStoreIntegration(w http.ResponseWriter, r *http.Request) error {
	return create(w, r, h.s, featurestore.BigSegmentStore, h.rep)
}

func (h bigSegmentHandlers) getBigSegmentStoreIntegration(w http.ResponseWriter, r *http.Request) error {
	return getOne(w, r, h.s, featurestore.BigSegmentStore, "integrationId", h.rep)
}

func (h bigSegmentHandlers) patchBigSegmentStoreIntegration(w http.ResponseWriter, r *http.Request) error {
	return patchOne(w, r, h.s, featurestore.BigSegmentStore, "integrationId", h.rep)
}

func (h bigSegmentHandlers) deleteBigSegmentStoreIntegration(w http.ResponseWriter, r *http.Request) error {
	return deleteOne(w, r, h.s, featurestore.BigSegmentStore, "integrationId")
}

// repFunc shows a configuration as its group does. The functions below
// are the operations both groups share, on one capability's
// configurations, whose id the path names idName.
type repFunc func(r *http.Request, cfg *featurestore.Config) (configRep, error)

func write(w http.ResponseWriter, r *http.Request, status int, cfg *featurestore.Config, rep repFunc) error {
	out, err := rep(r, cfg)
	if err != nil {
		return err
	}
	api.WriteJSON(w, status, out)
	return nil
}

func create(w http.ResponseWriter, r *http.Request, svc *featurestore.Service, capability string, rep repFunc) error {
	var in featurestore.Input
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	proj, env, key, _ := pathArgs(r, "")
	cfg, err := svc.Create(r.Context(), capability, proj, env, key, in)
	if err != nil {
		return err
	}
	return write(w, r, http.StatusCreated, cfg, rep)
}

func getOne(w http.ResponseWriter, r *http.Request, svc *featurestore.Service, capability, idName string, rep repFunc) error {
	proj, env, key, id := pathArgs(r, idName)
	cfg, err := svc.Get(r.Context(), capability, proj, env, key, id)
	if err != nil {
		return err
	}
	return write(w, r, http.StatusOK, cfg, rep)
}

func patchOne(w http.ResponseWriter, r *http.Request, svc *featurestore.Service, capability, idName string, rep repFunc) error {
	p, err := api.ReadJSONPatch(w, r, patchSubject)
	if err != nil {
		return err
	}
	proj, env, key, id := pathArgs(r, idName)
	cfg, err := svc.Patch(r.Context(), capability, proj, env, key, id, p)
	if err != nil {
		return err
	}
	return write(w, r, http.StatusOK, cfg, rep)
}

func deleteOne(w http.ResponseWriter, r *http.Request, svc *featurestore.Service, capability, idName string) error {
	proj, env, key, id := pathArgs(r, idName)
	if err := svc.Delete(r.Context(), capability, proj, env, key, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
