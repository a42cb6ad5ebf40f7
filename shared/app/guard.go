package app

import "github.com/flagplane/flagplane/shared/webhook"

// WebhookGuard is the SSRF guard of this app's settings: what every
// outbound request a group makes on a user's behalf (webhooks,
// integrations' event hooks, feature stores) may reach: loopback and
// private addresses in local mode and tests, or when the deployer says so.
func (a *App) WebhookGuard() webhook.Guard {
	return webhook.Guard{AllowPrivate: a.settings.AllowPrivateWebhooks}
}
