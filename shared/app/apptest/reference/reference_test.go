package reference_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/app/apptest/reference"
)

func TestTheReferenceLoadsWithItsSchemas(t *testing.T) {
	ref, err := reference.Load()
	if err != nil {
		t.Fatal(err)
	}
	op, ok := ref.Op("getFeatureFlag")
	if !ok {
		t.Fatal("getFeatureFlag is not in the reference")
	}
	if name, required := ref.Required(op, "200"); name != "FeatureFlag" || !slices.Contains(required, "customProperties") {
		t.Errorf("getFeatureFlag answers %s requiring %v", name, required)
	}
}

func TestCheckFindsWhatAClientWouldTripOn(t *testing.T) {
	ref, err := reference.Load()
	if err != nil {
		t.Fatal(err)
	}
	op, _ := ref.Op("getCustomRole")
	good := `{"_id":"1","_links":{},"key":"r","name":"R","policy":[]}`
	for _, tc := range []struct {
		name  string
		body  string
		types map[string]map[string]string
		want  string // a problem holding this; "" for none
	}{
		{"a complete answer has no problem", good, nil, ""},
		{"a missing required field is named", `{"_id":"1","_links":{},"name":"R","policy":[]}`, nil, `lacks "key"`},
		{"a field of another JSON type is named with its place", `{"_id":"1","_links":{},"key":"r","name":"R","policy":"all"}`, nil, "policy is a JSON string"},
		{"a required field that is null is named", `{"_id":"1","_links":{},"key":null,"name":"R","policy":[]}`, nil, `has "key" null`},
		{"a type override replaces the reference's type", `{"_id":"1","_links":{},"key":"r","name":"R","policy":[]}`, map[string]map[string]string{"CustomRole": {"name": "integer"}}, "name is a JSON string; it should be integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			problems := ref.Check(op, 200, []byte(tc.body), tc.types)
			if tc.want == "" {
				if len(problems) != 0 {
					t.Errorf("problems %v; want none", problems)
				}
				return
			}
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tc.want) }) {
				t.Errorf("problems %v; want one holding %q", problems, tc.want)
			}
		})
	}
	t.Run("a status the reference does not list is named", func(t *testing.T) {
		if p := ref.Check(op, 201, []byte(good), nil); len(p) == 0 || !strings.Contains(p[0], "status 201") {
			t.Errorf("problems %v", p)
		}
	})
}
