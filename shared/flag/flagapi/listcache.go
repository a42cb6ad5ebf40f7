package flagapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/cache"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/reps"
)

// listCache holds what the flag list reuses from one request to the next;
// each app has its own, so two servers in one process (tests) never share
// an answer.
//
// Listing flags was bound by encoding them: a page of 20 is ~50 KB of
// JSON, and the page is the same from one request to the next until a
// flag, an environment or the caller's rights change. flags keeps each
// flag's summary JSON under everything it depends on, so a list encodes
// only what changed. A key holds:
//   - the decoded flag, which the flag service's list cache shares between
//     requests until the stored flag changes (then it is a new pointer);
//   - the environments shown, by key and stored version;
//   - the caller's rights, which decide which environments show and
//     `_access` from the flag's key and tags and the project's tags
//     (included when the rights select by tag);
//   - whether `_access` is shown at all (expand=access), and whether
//     environments are (env, or an older LD-API-Version).
//
// The local server is its table's only writer, so a whole list answer
// stays true until its next commit (audit.Log.Generation): pages keeps
// answers under the generation read before the list read the table, the
// project, the query and the caller's rights. A repeated list then costs
// what a GET of one resource does. Lambda instances share the table with
// others and never use it.
type listCache struct {
	flags *cache.Bounded[summaryKey, []byte]
	pages *cache.Bounded[pageKey, []byte]
}

func newListCache() *listCache {
	return &listCache{
		flags: &cache.Bounded[summaryKey, []byte]{Max: 20000},
		pages: &cache.Bounded[pageKey, []byte]{Max: 256}, // about 60 KB each
	}
}

type summaryKey struct {
	f           *flag.Flag
	envs        string
	rights      any
	projectTags string
	access      bool
	noEnvs      bool
}

type pageKey struct {
	gen            uint64
	project, query string
	rights         any
}

// identified is implemented by rights that can name themselves for caches
// (see token rights' Identity).
type identified interface{ Identity() any }

// envSignature names the environments a summary shows, with their versions.
func envSignature(envs []*environment.Environment, only []string) string {
	var b strings.Builder
	for _, e := range envs {
		b.WriteString(e.Key)
		b.WriteByte('@')
		b.WriteString(strconv.FormatInt(e.Version, 10))
		b.WriteByte(',')
	}
	b.WriteByte('|')
	b.WriteString(strings.Join(only, ","))
	return b.String()
}

// summaries encodes a page of flags as list summaries, each from the
// cache when nothing it depends on changed.
func (c *listCache) summaries(r *http.Request, links api.Links, total int64, flags []*flag.Flag,
	envs []*environment.Environment, view reps.FlagView) ([]byte, error) {
	linksJSON, err := json.Marshal(links)
	if err != nil {
		return nil, err
	}
	sig := envSignature(envs, view.Only)
	rights := rightsIdentity(r)
	projectTags := ""
	if len(flags) > 0 {
		proj := api.StoredTags(r, policy.NewResource("proj", flags[0].ProjectKey))
		projectTags = strings.Join(proj.Segments()[0].Tags, ",")
	}
	var buf bytes.Buffer
	buf.Grow(len(flags) * 2600)
	buf.WriteString(`{"_links":`)
	buf.Write(linksJSON)
	buf.WriteString(`,"totalCount":`)
	buf.WriteString(strconv.FormatInt(total, 10))
	buf.WriteString(`,"items":[`)
	for i, f := range flags {
		if i > 0 {
			buf.WriteByte(',')
		}
		k := summaryKey{f: f, envs: sig, rights: rights, projectTags: projectTags, access: !view.NoAccess, noEnvs: view.NoEnvironments}
		keyed := rights != nil
		if keyed {
			if b, ok := c.flags.Get(k); ok {
				buf.Write(b)
				continue
			}
		}
		b, err := json.Marshal(reps.NewFlag(r, f, envs, view))
		if err != nil {
			return nil, err
		}
		if keyed {
			c.flags.Put(k, b)
		}
		buf.Write(b)
	}
	buf.WriteString("]}")
	return buf.Bytes(), nil
}

// rightsIdentity names the caller's rights for caches, nil when they
// cannot be named.
func rightsIdentity(r *http.Request) any {
	if p, ok := identity.From(r.Context()); ok {
		if id, ok := p.Rights.(identified); ok {
			return id.Identity()
		}
	}
	return nil
}

// writeJSONBytes answers 200 with body, a JSON document.
func writeJSONBytes(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	// A known length spares the chunked encoding of a large answer.
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
