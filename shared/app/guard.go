package app

import "github.com/flagplane/flagplane/shared/webhook"

// WebhookGuard is the SSRF guard of this app's settings: what every
// outbound request a group makes on a user's behalf (webhooks,
// integrations' event hooks) may reach.
func (a *App) WebhookGuard() webhook.Guard {
	return webhook.Guard{AllowPrivate: a.settings.AllowPrivateWebhooks}
}
