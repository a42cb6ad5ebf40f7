package infra

import (
	"strconv"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/destination"
)

// Resources names what a deployment's functions are pointed at.
type Resources struct {
	TableName string
	// WebhookQueueURL is the webhook dispatch queue; empty until it exists.
	WebhookQueueURL string
	// IngestQueueURL is the SDK event ingest queue.
	IngestQueueURL string
	// RateLimits, when set, are the limits each instance of an API
	// function applies; unset, the functions apply api.DefaultRateLimits.
	RateLimits *api.RateLimits
	// ExportBucket and ExportAccountID are the data export's S3 stage.
	ExportBucket, ExportAccountID string
	// DestinationKeySecret seals destination key pairs (a dynamic
	// reference to the generated secret, resolved at deploy time).
	DestinationKeySecret string
	// AuditStream says the table's stream carries the outbox (the stack's
	// table has one): commits write no outbox record and send nothing.
	AuditStream bool
	// AuditShards is the audit log's partition count; 0 or 1: one.
	AuditShards int
}

// EnvWebhookQueueURL names the webhook dispatch queue for the functions.
const EnvWebhookQueueURL = app.EnvWebhookQueueURL

// FunctionEnv is the environment every function gets, in AWS (set by the
// stack) and in the end-to-end harness alike. Endpoints and credentials are
// not here: they come from the standard AWS settings of wherever it runs.
func FunctionEnv(r Resources) map[string]string {
	env := map[string]string{
		app.EnvTable:     r.TableName,
		app.EnvApprovals: "true",
	}
	if r.WebhookQueueURL != "" {
		env[EnvWebhookQueueURL] = r.WebhookQueueURL
	}
	if r.IngestQueueURL != "" {
		env[app.EnvIngestQueueURL] = r.IngestQueueURL
	}
	if r.ExportBucket != "" {
		env[destination.EnvExportBucket] = r.ExportBucket
		env[destination.EnvExportAccount] = r.ExportAccountID
	}
	if r.DestinationKeySecret != "" {
		env[destination.EnvKeySecret] = r.DestinationKeySecret
	}
	if r.AuditShards > 1 {
		env[app.EnvAuditShards] = strconv.Itoa(r.AuditShards)
	}
	if r.AuditStream {
		env[app.EnvAuditStream] = "true"
	}
	if r.RateLimits != nil {
		env[app.EnvRateLimitGlobal] = strconv.Itoa(r.RateLimits.Global)
		env[app.EnvRateLimitRoute] = strconv.Itoa(r.RateLimits.Route)
		env[app.EnvRateLimitCredential] = strconv.Itoa(r.RateLimits.Credential)
	}
	return env
}
