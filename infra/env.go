package infra

import "github.com/flagplane/flagplane/shared/app"

// Resources names what a deployment's functions are pointed at.
type Resources struct {
	TableName string
	// WebhookQueueURL is the webhook dispatch queue; empty until it exists.
	WebhookQueueURL string
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
	return env
}
