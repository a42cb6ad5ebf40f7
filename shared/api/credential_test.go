package api_test

import (
	"net/http/httptest"
	"testing"

	"github.com/flagplane/flagplane/shared/api"
)

func TestSDKCredential(t *testing.T) {
	tests := []struct{ name, header, want string }{
		{"a server SDK's raw key is taken as it is", "sdk-123", "sdk-123"},
		{"a mobile SDK's key follows api_key", "api_key mob-123", "mob-123"},
		{"a bearer key is taken after Bearer, in any case", "BEARER tok-1", "tok-1"},
		{"spaces around the key are dropped", "  api_key   mob-9  ", "mob-9"},
		{"a prefix with nothing after it is the key itself", "api_key", "api_key"},
		{"no header is no key", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/bulk", nil)
			if tc.header != "" {
				r.Header.Set("Authorization", tc.header)
			}
			if got := api.SDKCredential(r); got != tc.want {
				t.Errorf("SDKCredential(%q) = %q, want %q", tc.header, got, tc.want)
			}
		})
	}
}
