package apptest

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/flagplane/flagplane/shared/example"
)

// A flag as the tests of flags, approvals, expiring targets and adaptive
// triggers read it, and the calls they share to make and change one.

type FlagRollout struct {
	Variations []struct {
		Variation int `json:"variation"`
		Weight    int `json:"weight"`
	} `json:"variations"`
	BucketBy    string `json:"bucketBy"`
	ContextKind string `json:"contextKind"`
}

type FlagServe struct {
	Variation *int         `json:"variation"`
	Rollout   *FlagRollout `json:"rollout"`
}

type FlagClause struct {
	ID          string `json:"_id"`
	Attribute   string `json:"attribute"`
	Op          string `json:"op"`
	Values      []any  `json:"values"`
	ContextKind string `json:"contextKind"`
	Negate      bool   `json:"negate"`
}

type FlagRule struct {
	ID          string       `json:"_id"`
	Description string       `json:"description"`
	Clauses     []FlagClause `json:"clauses"`
	TrackEvents bool         `json:"trackEvents"`
	FlagServe
}

type FlagTarget struct {
	Values      []string `json:"values"`
	Variation   int      `json:"variation"`
	ContextKind string   `json:"contextKind"`
}

type FlagPrereq struct {
	Key       string `json:"key"`
	Variation int    `json:"variation"`
}

type FlagEnv struct {
	On              bool         `json:"on"`
	Archived        bool         `json:"archived"`
	Salt            string       `json:"salt"`
	LastModified    int64        `json:"lastModified"`
	Version         int          `json:"version"`
	Targets         []FlagTarget `json:"targets"`
	ContextTargets  []FlagTarget `json:"contextTargets"`
	Rules           []FlagRule   `json:"rules"`
	Fallthrough     FlagServe    `json:"fallthrough"`
	OffVariation    *int         `json:"offVariation"`
	Prerequisites   []FlagPrereq `json:"prerequisites"`
	TrackEvents     bool         `json:"trackEvents"`
	EnvironmentName string       `json:"_environmentName"`
	Site            struct {
		Href string `json:"href"`
	} `json:"_site"`
}

type FlagVariation struct {
	ID          string `json:"_id"`
	Value       any    `json:"value"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// FlagDoc is a flag answer; its parts are the Flag* types.
type FlagDoc struct {
	Links        map[string]struct{ Href string } `json:"_links"`
	Key          string                           `json:"key"`
	Name         string                           `json:"name"`
	Description  string                           `json:"description"`
	Kind         string                           `json:"kind"`
	Version      int                              `json:"_version"`
	CreationDate int64                            `json:"creationDate"`
	Variations   []FlagVariation                  `json:"variations"`
	Defaults     struct {
		OnVariation  int `json:"onVariation"`
		OffVariation int `json:"offVariation"`
	} `json:"defaults"`
	Tags                   []string `json:"tags"`
	Temporary              bool     `json:"temporary"`
	Archived               bool     `json:"archived"`
	MaintainerID           string   `json:"maintainerId"`
	ClientSideAvailability struct {
		UsingMobileKey     bool `json:"usingMobileKey"`
		UsingEnvironmentID bool `json:"usingEnvironmentId"`
	} `json:"clientSideAvailability"`
	Environments map[string]FlagEnv `json:"environments"`
	Access       *struct {
		Allowed []struct{ Action string } `json:"allowed"`
		Denied  []struct{ Action string } `json:"denied"`
	} `json:"_access"`
}

// VID is the id of variation i.
func (d FlagDoc) VID(i int) string { return d.Variations[i].ID }

// Prod is the flag's targeting in production.
func (d FlagDoc) Prod() FlagEnv { return d.Environments["production"] }

// DecodeFlag reads a flag answer.
func DecodeFlag(t testing.TB, res *Response) FlagDoc {
	t.Helper()
	var d FlagDoc
	res.JSON(t, &d)
	return d
}

// CreateFlag creates a flag of project p from body, which must succeed.
func CreateFlag(t testing.TB, srv *Server, p string, body map[string]any) FlagDoc {
	t.Helper()
	res := srv.Do(t, http.MethodPost, FlagsPath(p), body)
	WantStatus(t, res, http.StatusCreated)
	return DecodeFlag(t, res)
}

// ABCFlag creates a multivariate flag serving "a", "b" or "c" (on: a, off: c).
func ABCFlag(t testing.TB, srv *Server, p, key string) FlagDoc {
	t.Helper()
	return CreateFlag(t, srv, p, map[string]any{"key": key, "name": "Flag " + key,
		"variations": []map[string]any{{"value": "a"}, {"value": "b", "name": "Bee"}, {"value": "c"}},
		"defaults":   map[string]any{"onVariation": 0, "offVariation": 2}})
}

// GetFlag reads flag f of project p, which must exist, with its `_access`
// (expand=access), as the answers to its create and patches show it.
func GetFlag(t testing.TB, srv *Server, p, f string) FlagDoc {
	t.Helper()
	res := srv.Do(t, http.MethodGet, FlagPath(p, f)+"?expand=access", nil)
	WantStatus(t, res, http.StatusOK)
	return DecodeFlag(t, res)
}

// SemanticPatchFlag sends body to flag f as a semantic patch.
func SemanticPatchFlag(t testing.TB, srv *Server, p, f string, body any, headers ...string) *Response {
	t.Helper()
	return srv.Do(t, http.MethodPatch, FlagPath(p, f), body, append([]string{"Content-Type", SemanticType}, headers...)...)
}

// SemanticBody is a semantic patch of instructions in environment env
// (none when env is "").
func SemanticBody(env string, ins ...map[string]any) map[string]any {
	body := map[string]any{"instructions": ins}
	if env != "" {
		body["environmentKey"] = env
	}
	return body
}

// IntOf is *p, or -1 for nil.
func IntOf(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

// TargetValues reads targets as "kind/variation" to their sorted keys, comma-joined.
func TargetValues(ts []FlagTarget) map[string]string {
	out := map[string]string{}
	for _, t := range ts {
		kind := t.ContextKind
		if kind == "" {
			kind = "user"
		}
		keys := slices.Clone(t.Values)
		sort.Strings(keys)
		out[fmt.Sprintf("%s/%d", kind, t.Variation)] = strings.Join(keys, ",")
	}
	return out
}

// Concurrently runs call n times at once; each answer must be 200 or 409.
// It returns the indexes that got 200, and fails unless at least one did.
func Concurrently(t *testing.T, n int, call func(i int) *Response) []int {
	t.Helper()
	var mu sync.Mutex
	var won []int
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := call(i)
			switch res.Status {
			case http.StatusOK:
				mu.Lock()
				won = append(won, i)
				mu.Unlock()
			case http.StatusConflict:
			default:
				t.Errorf("request %d: status %d: %s", i, res.Status, res.Body)
			}
		}()
	}
	wg.Wait()
	if len(won) == 0 {
		t.Fatalf("no request of %d succeeded", n)
	}
	return won
}

// UserExpiringPath and FlagExpiringPath are the paths of expiring targets.
var (
	UserExpiringPath = example.UserExpiringPath
	FlagExpiringPath = example.FlagExpiringPath
)
