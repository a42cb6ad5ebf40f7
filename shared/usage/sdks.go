package usage

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/flagplane/flagplane/shared/ingest"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/store"
)

// SDKWindow is how far back the SDK version lists look.
const SDKWindow = 24 * time.Hour

//go:embed sdkversions.json
var sdkVersionsJSON []byte

// VersionsTable is the shipped table of the SDKs' latest releases.
type VersionsTable struct {
	AsOf string                   `json:"asOf"`
	Note string                   `json:"note"`
	SDKs map[string]LatestRelease `json:"sdks"`
	// Aliases are the names diagnostic events give SDKs ("go-server-sdk"),
	// by the User-Agent name the table knows them by ("GoClient").
	Aliases map[string]string `json:"aliases"`
}

// Release is the table's entry for an SDK name, through its aliases.
func (t VersionsTable) Release(name string) (LatestRelease, bool) {
	if alias, ok := t.Aliases[name]; ok {
		name = alias
	}
	rel, ok := t.SDKs[name]
	return rel, ok
}

// LatestRelease is one SDK's latest release and its majors' end-of-life dates (yyyy-mm-dd).
type LatestRelease struct {
	LatestVersion string            `json:"latestVersion"`
	ReleaseURL    string            `json:"releaseUrl"`
	EOLDates      map[string]string `json:"eolDates,omitempty"`
}

// Versions is the shipped table; a malformed table fails at start, not on a request.
var Versions = func() VersionsTable {
	var t VersionsTable
	if err := json.Unmarshal(sdkVersionsJSON, &t); err != nil {
		panic(fmt.Sprintf("usage: sdkversions.json: %v", err))
	}
	return t
}()

// EOL statuses.
const (
	EolAllClear           = "EolAllClear"
	EolNear               = "EolNear"
	EolPast               = "EolPast"
	MajorVersionAvailable = "MajorVersionAvailable"
	EolUnknown            = "EolUnknown"
)

// EOLNearWindow is how long before a major's end of life it reads EolNear.
const EOLNearWindow = 90 * 24 * time.Hour

// EOLStatus says where version of the SDK name stands against the table at now.
func (t VersionsTable) EOLStatus(name, version string, now time.Time) string {
	rel, ok := t.Release(name)
	if !ok || version == "" {
		return EolUnknown
	}
	major := majorOf(version)
	if eol, ok := rel.EOLDates[strconv.Itoa(major)]; ok {
		if d, err := time.Parse("2006-01-02", eol); err == nil {
			switch {
			case !now.Before(d):
				return EolPast
			case d.Sub(now) <= EOLNearWindow:
				return EolNear
			}
		}
	}
	if major < majorOf(rel.LatestVersion) {
		return MajorVersionAvailable
	}
	return EolAllClear
}

func majorOf(v string) int {
	head, _, _ := strings.Cut(strings.TrimPrefix(v, "v"), ".")
	n, _ := strconv.Atoi(head)
	return n
}

// CompareVersions orders dotted versions numerically (1.10 after 1.9); a
// pre-release suffix sorts before its release.
func CompareVersions(a, b string) int {
	pa, pb := strings.Split(strings.TrimPrefix(a, "v"), "."), strings.Split(strings.TrimPrefix(b, "v"), ".")
	for i := 0; i < max(len(pa), len(pb)); i++ {
		var xa, xb string
		if i < len(pa) {
			xa = pa[i]
		}
		if i < len(pb) {
			xb = pb[i]
		}
		na, sa := splitNum(xa)
		nb, sb := splitNum(xb)
		if na != nb {
			if na < nb {
				return -1
			}
			return 1
		}
		if sa != sb {
			switch {
			case sa == "":
				return 1
			case sb == "":
				return -1
			case sa < sb:
				return -1
			}
			return 1
		}
	}
	return 0
}

func splitNum(s string) (int, string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, _ := strconv.Atoi(s[:i])
	return n, s[i:]
}

// SDKFilter keeps SDKs by the sdk-versions filters; empty fields keep all.
type SDKFilter struct {
	EnvID, ProjectKey, Name, Type, AppID, ConnectionType string
}

// SeenSDK is one SDK (name, version, type) seen in one environment in the window.
type SeenSDK struct {
	ingest.SDKSeen
	// ConnectionType is direct, or proxy for an SDK behind a Relay Proxy.
	ConnectionType string `json:"connection"`
}

// keeps says whether the filter keeps s.
func (f SDKFilter) keeps(s SeenSDK) bool {
	return (f.EnvID == "" || f.EnvID == s.EnvID) && (f.ProjectKey == "" || f.ProjectKey == s.ProjectKey) &&
		(f.Name == "" || f.Name == s.Name) && (f.Type == "" || f.Type == s.Type) && (f.AppID == "" || f.AppID == s.ApplicationID) &&
		(f.ConnectionType == "" || f.ConnectionType == s.ConnectionType)
}

// SeenSDKs lists the SDKs seen within SDKWindow before now, sorted by name,
// version, project and environment: one Query of the SDK partition (the
// aggregator refreshes each SDK's item at most once an hour per process).
// The API reads the rollup's hourly snapshot of it (SnapshotSDKsSeen).
func SeenSDKs(ctx context.Context, table store.Table, now time.Time, f SDKFilter) ([]SeenSDK, error) {
	since := now.Add(-SDKWindow).UnixMilli()
	var out []SeenSDK
	err := record.Each(ctx, table, store.Query{PK: store.SDKSeenPK}, "SDKs seen", func(it store.Item) error {
		var s ingest.SDKSeen
		if err := json.Unmarshal(it.Data, &s); err != nil {
			return fmt.Errorf("decode SDK seen %s: %w", it.SK, err)
		}
		conn := "direct"
		if s.Connection == "relay" {
			conn = "proxy"
		}
		if seen := (SeenSDK{SDKSeen: s, ConnectionType: conn}); s.LastSeen >= since && f.keeps(seen) {
			out = append(out, seen)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if c := CompareVersions(a.Version, b.Version); c != 0 {
			return c < 0
		}
		if a.ProjectKey != b.ProjectKey {
			return a.ProjectKey < b.ProjectKey
		}
		return a.EnvKey < b.EnvKey
	})
	return out, nil
}

// HighestVersions keeps, for each SDK name and type, the entry of its highest version.
func HighestVersions(all []SeenSDK) []SeenSDK {
	best := map[string]int{}
	var order []string
	for i, s := range all {
		k := s.Type + "\x00" + s.Name
		j, ok := best[k]
		if !ok {
			order = append(order, k)
			best[k] = i
			continue
		}
		if c := CompareVersions(s.Version, all[j].Version); c > 0 || (c == 0 && s.LastSeen > all[j].LastSeen) {
			best[k] = i
		}
	}
	out := make([]SeenSDK, 0, len(order))
	for _, k := range order {
		out = append(out, all[best[k]])
	}
	return out
}

// SDKNames lists the SDK names that had contexts of the primary kind in
// from..to, on the side asked for (client or server): the MAU SDKs.
func (rd *Reader) SDKNames(ctx context.Context, side string, from, to time.Time) ([]string, error) {
	s, err := rd.Compute(ctx, Request{Metric: MAU, Side: side, From: from, To: to, Aggregation: Incremental,
		Granularity: Daily, GroupBy: []string{DimSDKName}})
	if err != nil {
		return nil, err
	}
	names := []string{}
	for i, md := range s.Metadata {
		for _, p := range s.Points {
			if p[strconv.Itoa(i)] > 0 {
				names = append(names, md[DimSDKName].(string))
				break
			}
		}
	}
	sort.Strings(names)
	return names, nil
}
