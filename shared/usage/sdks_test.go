package usage_test

import (
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/usage"
)

func TestCompareVersions(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"7.14.6", "7.2.0", 1},
		{"7.2.0", "7.2.0", 0},
		{"1.0.0-beta.1", "1.0.0", -1},
		{"v2.0", "1.9.9", 1},
		{"3", "3.0.1", -1},
	}
	for _, c := range cases {
		t.Run(c.a+" against "+c.b, func(t *testing.T) {
			if got := usage.CompareVersions(c.a, c.b); got != c.want {
				t.Errorf("= %d, want %d", got, c.want)
			}
		})
	}
}

func TestEOLStatus(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	table := usage.VersionsTable{SDKs: map[string]usage.LatestRelease{
		"GoClient": {LatestVersion: "7.10.0", EOLDates: map[string]string{"5": "2026-01-01", "6": "2026-07-01"}},
	}, Aliases: map[string]string{"go-server-sdk": "GoClient"}}
	cases := []struct{ name, sdk, version, want string }{
		{"the latest major is all clear", "GoClient", "7.1.0", usage.EolAllClear},
		{"a major past its end of life", "GoClient", "5.3.0", usage.EolPast},
		{"a major within 90 days of its end of life", "GoClient", "6.0.0", usage.EolNear},
		{"an older major without a date has a newer major available", "GoClient", "4.0.0", usage.MajorVersionAvailable},
		{"an SDK missing from the table is unknown", "ElmClient", "1.0.0", usage.EolUnknown},
		{"the name a diagnostic event gives is an alias", "go-server-sdk", "6.0.0", usage.EolNear},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := table.EOLStatus(c.sdk, c.version, now); got != c.want {
				t.Errorf("= %s, want %s", got, c.want)
			}
		})
	}
	t.Run("the shipped table has a date and an entry for the Go SDK", func(t *testing.T) {
		if _, err := time.Parse("2006-01-02", usage.Versions.AsOf); err != nil || usage.Versions.SDKs["GoClient"].LatestVersion == "" {
			t.Errorf("table = %+v", usage.Versions)
		}
		for alias, name := range usage.Versions.Aliases {
			if _, ok := usage.Versions.SDKs[name]; !ok {
				t.Errorf("alias %s names %s, which the table lacks", alias, name)
			}
		}
	})
}
