package flagimport

import (
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strconv"
	"time"
)

// Configuration is one flag import configuration of a project. Config
// holds secrets in clear; reads and audit entries see Masked().
type Configuration struct {
	ID             string   `json:"_id"`
	IntegrationKey string   `json:"integrationKey"`
	ProjectKey     string   `json:"projectKey"`
	Name           string   `json:"name"`
	Tags           []string `json:"tags"`
	Config         Config   `json:"config"`
	Version        int64    `json:"version"`
}

// Masked is the configuration as reads and audit entries show it.
func (c *Configuration) Masked() *Configuration {
	m := *c
	m.Config = c.Config.Masked(c.IntegrationKey)
	m.Tags = slices.Clone(c.Tags)
	if m.Tags == nil {
		m.Tags = []string{}
	}
	return &m
}

// Resource is the configuration's resource specifier, as the catalog names it.
func Resource(projectKey, integrationKey, id string) string {
	return "proj/" + projectKey + ":integration/" + integrationKey + "/" + id
}

// CollectionHref is the path of every configuration.
const CollectionHref = "/api/v2/integration-capabilities/flag-import"

// Href is the configuration's API path.
func Href(projectKey, integrationKey, id string) string {
	return CollectionHref + "/" + projectKey + "/" + integrationKey + "/" + id
}

// Actions are those `_access` reports on a configuration.
var Actions = []string{"updateIntegration", "deleteIntegration", "triggerFlagImport"}

// Statuses of a configuration's import, the reference's FlagImportStatus enum.
const (
	StatusPending   = "pending"   // never run
	StatusImporting = "importing" // a run holds the lease
	StatusComplete  = "complete"  // the last run imported every flag
	StatusPartial   = "partial"   // the last run imported some flags and failed on others
	StatusFailed    = "failed"    // the last run imported nothing (or stopped without finishing)
)

// Run is a configuration's run state: the lease of a running import and
// what the last finished one left.
type Run struct {
	Status string `json:"status"`
	// RunID names the run holding (or last holding) the lease.
	RunID string `json:"runId,omitempty"`
	// StartedAt and LeaseUntil are Unix ms; a run whose lease has passed
	// crashed or was cut off, and no longer blocks a new one.
	StartedAt  int64 `json:"startedAt,omitempty"`
	LeaseUntil int64 `json:"leaseUntil,omitempty"`
	// LastImport is when a run last imported flags; LastError when one
	// last failed on something (Unix ms, 0 never).
	LastImport int64 `json:"lastImport,omitempty"`
	LastError  int64 `json:"lastError,omitempty"`
	// Errors are the last finished run's failures, at most MaxErrors.
	Errors []RunError `json:"errors"`
	// Counts of the last finished run.
	Created   int `json:"created"`
	Updated   int `json:"updated"`
	Unchanged int `json:"unchanged"`
	Failed    int `json:"failed"`
	// ResumeAfter is the key of the last flag a run cut by its budget
	// reached: the next run starts after it (and comes round to the
	// others), so runs of a large source make progress.
	ResumeAfter string `json:"resumeAfter,omitempty"`
	// ItemVersion is the store version, the lease's fencing token.
	ItemVersion int64 `json:"-"`
}

// RunError is one failure of a run, as the reference's StatusResponse.
type RunError struct {
	IntegrationID string `json:"integrationId"`
	Message       string `json:"message"`
	StatusCode    int    `json:"statusCode"`
	Timestamp     int64  `json:"timestamp"`
}

// MaxErrors bounds the errors a run keeps.
const MaxErrors = 50

// View is the run state as `_status` shows it at now: pending before the
// first run, and a run whose lease ran out before it finished as failed.
func (r *Run) View(now time.Time, integrationID string) Run {
	if r == nil {
		return Run{Status: StatusPending, Errors: []RunError{}}
	}
	v := *r
	v.Errors = slices.Clone(r.Errors)
	if v.Errors == nil {
		v.Errors = []RunError{}
	}
	if v.Status == StatusImporting && now.UnixMilli() >= v.LeaseUntil {
		v.Status = StatusFailed
		v.LastError = v.LeaseUntil
		v.Errors = append([]RunError{{IntegrationID: integrationID, StatusCode: 500, Timestamp: v.LeaseUntil,
			Message: "the run started at " + strconv.FormatInt(v.StartedAt, 10) + " stopped before finishing (its process ended); trigger the import again: a rerun only updates what differs"}}, v.Errors...)
	}
	return v
}

// Running reports whether a run holds the lease at now.
func (r *Run) Running(now time.Time) bool {
	return r != nil && r.Status == StatusImporting && now.UnixMilli() < r.LeaseUntil
}

// newID is a configuration id in the reference's form: 24 hex digits.
func newID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
