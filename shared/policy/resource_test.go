package policy

import (
	"slices"
	"testing"
)

func TestEnclosingListsTheContainersOutermostFirst(t *testing.T) {
	flag := NewResource("proj", "shop", "web").Child("env", "production", "critical").Child("flag", "checkout")
	tests := []struct {
		name string
		res  Resource
		want []string
	}{
		{"a flag in an environment is enclosed by its project and environment, with their tags", flag,
			[]string{"proj/shop;web", "proj/shop;web:env/production;critical", "proj/shop;web:env/production;critical:flag/checkout"}},
		{"a top-level resource encloses only itself", NewResource("webhook", "w1"), []string{"webhook/w1"}},
		{"the zero resource has nothing", Resource{}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := []string{}
			for _, r := range tt.res.Enclosing() {
				got = append(got, r.String())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Enclosing() = %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("a child of an enclosing resource does not write into the resource's segments", func(t *testing.T) {
		outer := flag.Enclosing()[0]
		_ = outer.Child("env", "test")
		if flag.String() != "proj/shop;web:env/production;critical:flag/checkout" {
			t.Errorf("the resource changed to %s", flag)
		}
	})
}

func TestWithKeyAimsAWildcardAtOneResource(t *testing.T) {
	base := NewResource("proj", "p", "shop").Child("env", "*").Child("flag", "f")
	for _, tc := range []struct {
		name      string
		kind, key string
		want      string
	}{
		{"the environment's wildcard becomes the environment acted in", "env", "production", "proj/p;shop:env/production:flag/f"},
		{"an empty key leaves the resource as it is", "env", "", "proj/p;shop:env/*:flag/f"},
		{"a kind the resource does not have changes nothing", "segment", "s", "proj/p;shop:env/*:flag/f"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := base.WithKey(tc.kind, tc.key).String(); got != tc.want {
				t.Errorf("WithKey(%q, %q) = %s, want %s", tc.kind, tc.key, got, tc.want)
			}
		})
	}
	t.Run("the resource it was made from is unchanged", func(t *testing.T) {
		base.WithKey("env", "test")
		if got := base.String(); got != "proj/p;shop:env/*:flag/f" {
			t.Errorf("base became %s", got)
		}
	})
	t.Run("tags are kept", func(t *testing.T) {
		if segs := base.WithKey("env", "test").Segments(); len(segs[0].Tags) != 1 || segs[0].Tags[0] != "shop" {
			t.Errorf("segments %+v lost the project's tag", segs)
		}
	})
}
