package api

import (
	"net/http"
	"strings"
)

// SDKCredential takes the key of a request's Authorization header, as
// LaunchDarkly's SDKs and alert sources send it: the raw key (server-side
// SDKs), or after "api_key " (mobile SDKs) or "Bearer ".
func SDKCredential(r *http.Request) string {
	v := strings.TrimSpace(r.Header.Get("Authorization"))
	for _, p := range []string{"api_key ", "bearer "} {
		if len(v) > len(p) && strings.EqualFold(v[:len(p)], p) {
			return strings.TrimSpace(v[len(p):])
		}
	}
	return v
}
