// Package destinationapi serves the destinations group over HTTP:
// warehouse destinations per environment, their key pairs, setup scripts
// and trust policies, and (locally) the timer that exports spooled events
// to the stage folder.
package destinationapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/destination"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/jsondoc"
	"github.com/flagplane/flagplane/shared/policy"
)

// New is the destinations group over a, with the local stand-in of the
// destinations-export function as its worker when the stage is a folder.
func New(a *app.App) app.Group {
	h := handlers{svc: Service(a)}
	g := app.Group{
		Name: "destinations",
		Handlers: map[string]api.Handler{
			"getDestinations":                         h.getDestinations,
			"postDestination":                         h.postDestination,
			"getDestination":                          h.getDestination,
			"patchDestination":                        h.patchDestination,
			"deleteDestination":                       h.deleteDestination,
			"postGenerateWarehouseDestinationKeyPair": h.generateKeyPair,
			"postGenerateProjectEnvWarehouseDestinationKeyPair": h.generateKeyPair,
			"postGenerateTrustPolicy":                           h.postGenerateTrustPolicy,
			"postGenerateWarehouseDestinationSetupScript":       h.postGenerateWarehouseDestinationSetupScript,
			"postCompleteWarehouseDestinationSetup":             h.postCompleteWarehouseDestinationSetup,
		},
		Needs:    map[string]api.Needs{"patchDestination": api.PatchNeeds("a destination", destination.PatchActions)},
		Answers:  answers,
		Examples: examples(),
	}
	if stage := StageFromEnv(a); stage.Kind == destination.StageFolder {
		g.Workers = []app.Worker{{Name: "destinations-export", Every: destination.ExportInterval, Run: exportTo(a, stage)}}
	} else if a.Logger != nil {
		a.Logger.Info("data export to S3 runs in the destinations-export function; the local timer is off", "bucket", stage.Bucket)
	}
	return g
}

// answers are the group's success answers, for the OpenAPI document.
var answers = map[string]api.Answer{
	"getDestinations":                         {Status: http.StatusOK, Rep: listRep{}},
	"postDestination":                         {Status: http.StatusCreated, Rep: rep{}},
	"getDestination":                          {Status: http.StatusOK, Rep: rep{}},
	"patchDestination":                        {Status: http.StatusOK, Rep: rep{}},
	"deleteDestination":                       {Status: http.StatusNoContent},
	"postGenerateWarehouseDestinationKeyPair": {Status: http.StatusCreated, Rep: destination.PublicKeys{}},
	"postGenerateProjectEnvWarehouseDestinationKeyPair": {Status: http.StatusCreated, Rep: destination.PublicKeys{}},
	"postGenerateTrustPolicy":                           {Status: http.StatusCreated, Rep: destination.TrustPolicy{}},
	"postGenerateWarehouseDestinationSetupScript":       {Status: http.StatusCreated, Rep: destination.SetupResult{}},
	"postCompleteWarehouseDestinationSetup":             {Status: http.StatusCreated, Rep: rep{}},
}

// Service returns a destination service over a.
func Service(a *app.App) *destination.Service {
	sealer, err := sealerFor(a)
	if err != nil && a.Logger != nil {
		a.Logger.Error("destination key pairs are off", "err", err)
	}
	return destination.NewService(a.Table, a.Services.Audit, a.Services.Environments, sealer, StageFromEnv(a), a.Now)
}

// pathed is a table kept in a file (the local store).
type pathed interface{ Path() string }

// sealerFor reads the key-encryption secret from the environment; a local
// store without one gets a random secret in a file beside the data file
// (mode 0600), made on first use.
func sealerFor(a *app.App) (*destination.Sealer, error) {
	if secret := os.Getenv(destination.EnvKeySecret); secret != "" {
		return destination.NewSealer(secret)
	}
	p, ok := a.Table.(pathed)
	if !ok {
		return nil, fmt.Errorf("%s is not set", destination.EnvKeySecret)
	}
	file := p.Path() + ".destination-key"
	secret, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		secret = []byte(hex.EncodeToString(b[:]))
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			return sealerFor(a) // made meanwhile: read it
		}
		if err != nil {
			return nil, fmt.Errorf("create %s: %w", file, err)
		}
		_, werr := f.Write(secret)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return nil, fmt.Errorf("write %s: %w", file, werr)
		}
	} else if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	return destination.NewSealer(strings.TrimSpace(string(secret)))
}

// StageFromEnv says where exports land: the S3 bucket when one is
// configured, else the configured folder, else flagplane-export beside
// the local data file.
func StageFromEnv(a *app.App) destination.StageInfo {
	if bucket := os.Getenv(destination.EnvExportBucket); bucket != "" {
		region := os.Getenv("AWS_REGION")
		return destination.StageInfo{Kind: destination.StageS3, Bucket: bucket, Region: region, AccountID: os.Getenv(destination.EnvExportAccount)}
	}
	dir := os.Getenv(destination.EnvExportDir)
	if dir == "" {
		if p, ok := a.Table.(pathed); ok {
			dir = filepath.Join(filepath.Dir(p.Path()), "flagplane-export")
		} else {
			dir = filepath.Join(os.TempDir(), "flagplane-export")
		}
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return destination.StageInfo{Kind: destination.StageFolder, Dir: dir}
}

// exportTo moves spooled events to the stage folder: the local stand-in
// of the destinations-export function, which exports to S3.
func exportTo(a *app.App, stage destination.StageInfo) func(ctx context.Context, logger *slog.Logger) error {
	return func(ctx context.Context, logger *slog.Logger) error {
		r, err := destination.NewExporter(a.Table, destination.Folder{Dir: stage.Dir}, logger, a.Now).Run(ctx)
		if err != nil {
			return fmt.Errorf("data export: %w", err)
		}
		if r.Batches > 0 {
			logger.Info("data export wrote batches", "batches", r.Batches, "events", r.Events, "folder", stage.Dir)
		}
		return nil
	}
}

// rep is a destination as the reference's Destination: config as a
// JSON-encoded string, createdAt as a string of Unix milliseconds.
type rep struct {
	ID                 string                 `json:"_id"`
	Links              api.Links              `json:"_links"`
	Name               string                 `json:"name"`
	Kind               string                 `json:"kind"`
	Version            int64                  `json:"version"`
	Config             string                 `json:"config"`
	On                 bool                   `json:"on"`
	CreatedAt          jsondoc.MillisString   `json:"createdAt"`
	MaintainerID       string                 `json:"maintainerId,omitempty"`
	Access             policy.Access          `json:"_access"`
	CompletedArtifacts *destination.Artifacts `json:"completedArtifacts,omitempty"`
}

type listRep struct {
	Links api.Links `json:"_links"`
	Items []rep     `json:"items"`
}

func newRep(r *http.Request, d *destination.Destination) rep {
	cfg, _ := json.Marshal(d.Config)
	p, _ := identity.From(r.Context())
	res := resourceOf(d)
	return rep{ID: d.ID, Name: d.Name, Kind: d.Kind, Version: d.Version, Config: string(cfg), On: d.On,
		CreatedAt: jsondoc.MillisString(d.CreatedAt), MaintainerID: d.MaintainerID,
		Access: p.Access(api.StoredTags(r, res), destination.Actions), CompletedArtifacts: d.CompletedArtifacts,
		Links: api.Links{"self": api.JSONLink(destination.Href(d.ProjectKey, d.EnvKey, d.ID)), "parent": api.JSONLink(destination.ListHref)}}
}

// resourceOf is the destination's own resource, which its GET names.
func resourceOf(d *destination.Destination) policy.Resource {
	return policy.NewResource("proj", d.ProjectKey).Child("env", d.EnvKey).Child("destination", d.ID)
}

// handlers serve the group's operations on the destination service.
type handlers struct {
	svc *destination.Service
}

// getDestinations lists the destinations the caller may read.
func (h handlers) getDestinations(w http.ResponseWriter, r *http.Request) error {
	list, err := h.svc.List(r.Context())
	if err != nil {
		return err
	}
	out := listRep{Links: api.Self(destination.ListHref), Items: make([]rep, 0, len(list))}
	for _, d := range list {
		if api.MayView(r, resourceOf(d), identity.ViewAction) {
			out.Items = append(out.Items, newRep(r, d))
		}
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h handlers) postDestination(w http.ResponseWriter, r *http.Request) error {
	var in destination.Input
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	d, err := h.svc.Create(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"), in)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusCreated, newRep(r, d))
	return nil
}

func (h handlers) getDestination(w http.ResponseWriter, r *http.Request) error {
	d, err := h.svc.Get(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"), r.PathValue("id"))
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newRep(r, d))
	return nil
}

func (h handlers) patchDestination(w http.ResponseWriter, r *http.Request) error {
	p, err := api.ReadJSONPatch(w, r, "a destination")
	if err != nil {
		return err
	}
	d, err := h.svc.Patch(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"), r.PathValue("id"), p)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, newRep(r, d))
	return nil
}

func (h handlers) deleteDestination(w http.ResponseWriter, r *http.Request) error {
	if err := h.svc.Delete(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// generateKeyPair serves both of the reference's key-pair operations,
// which differ only in their paths.
func (h handlers) generateKeyPair(w http.ResponseWriter, r *http.Request) error {
	k, err := h.svc.GenerateKeyPair(r.Context(), r.PathValue("projKey"), r.PathValue("envKey"))
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusCreated, k.Public())
	return nil
}

func (h handlers) postGenerateTrustPolicy(w http.ResponseWriter, r *http.Request) error {
	tp, err := h.svc.TrustPolicy(r.Context(), r.PathValue("projKey"), r.PathValue("envKey"))
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusCreated, tp)
	return nil
}

func (h handlers) postGenerateWarehouseDestinationSetupScript(w http.ResponseWriter, r *http.Request) error {
	// The body is optional: without custom names the defaults apply.
	body, err := api.ReadBody(w, r)
	if fault.Is(err, fault.Invalid) && len(body) == 0 && r.ContentLength <= 0 {
		body, err = nil, nil
	}
	if err != nil {
		return err
	}
	res, err := h.svc.Setup(r.Context(), r.PathValue("projKey"), r.PathValue("envKey"), r.PathValue("kind"), body)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusCreated, res)
	return nil
}

func (h handlers) postCompleteWarehouseDestinationSetup(w http.ResponseWriter, r *http.Request) error {
	var in destination.CompleteInput
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	d, err := h.svc.CompleteSetup(r.Context(), r.PathValue("projKey"), r.PathValue("envKey"), r.PathValue("kind"), in)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusCreated, newRep(r, d))
	return nil
}
