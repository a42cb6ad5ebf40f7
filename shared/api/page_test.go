package api_test

import (
	"maps"
	"net/url"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/fault"
)

func TestExpand(t *testing.T) {
	for _, c := range []struct {
		name, query string
		want        map[string]bool
		refused     bool
	}{
		{"no expand expands nothing", "", map[string]bool{}, false},
		{"a comma-separated list names each", "expand=roles,%20members", map[string]bool{"roles": true, "members": true}, false},
		{"every expand parameter counts", "expand=roles&expand=members", map[string]bool{"roles": true, "members": true}, false},
		{"empty names are skipped", "expand=,roles,", map[string]bool{"roles": true}, false},
		{"a name not allowed is refused", "expand=roles,everything", nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			q, err := url.ParseQuery(c.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := api.Expand(q, "roles", "members")
			if c.refused {
				if fault.CodeOf(err) != fault.Invalid || !strings.Contains(fault.MessageOf(err), "everything") {
					t.Fatalf("error %v, want an invalid request", err)
				}
				return
			}
			if err != nil || !maps.Equal(got, c.want) {
				t.Errorf("got %v, %v; want %v", got, err, c.want)
			}
		})
	}
}
