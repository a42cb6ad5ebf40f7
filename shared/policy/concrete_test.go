package policy

import (
	"reflect"
	"testing"
)

func TestResourceOf(t *testing.T) {
	for _, tc := range []struct {
		name, specifier string
		want            Resource
		ok              bool
	}{
		{"a project is one segment", "proj/p", NewResource("proj", "p"), true},
		{"a flag keeps its path and the tags of each segment", "proj/p;web:env/e:flag/f;beta",
			NewResource("proj", "p", "web").Child("env", "e").Child("flag", "f", "beta"), true},
		{"a specifier that does not parse names nothing", "proj/p:", Resource{}, false},
		{"an empty specifier names nothing", "", Resource{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ResourceOf(tc.specifier)
			if ok != tc.ok || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ResourceOf(%q) = %v, %v; want %v, %v", tc.specifier, got, ok, tc.want, tc.ok)
			}
		})
	}
}
