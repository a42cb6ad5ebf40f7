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
