package app

// AllowsPrivateAddresses reports whether outbound connections this app
// makes for its users (webhooks, feature stores) may reach loopback and
// private addresses: local mode and tests, or when the deployer says so.
func (a *App) AllowsPrivateAddresses() bool { return a.settings.AllowPrivateWebhooks }
