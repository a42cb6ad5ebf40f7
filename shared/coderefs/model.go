// Package coderefs keeps code references: repositories, the branches a
// scanner such as LaunchDarkly's ld-find-code-refs uploads (every hunk of
// code that names a flag), and extinctions, the moments a branch stopped
// referencing a flag. No HTTP here: coderefsapi serves it.
package coderefs

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/flagplane/flagplane/shared/fault"
)

// Repository types, as the reference enumerates them.
var repoTypes = []string{"bitbucket", "custom", "github", "gitlab"}

// Limits.
const (
	maxNameLen     = 200
	maxURLLen      = 2048
	maxBranchLen   = 512
	maxRevisionLen = 512
	// MaxMessageLen bounds a stored extinction message (a commit message,
	// as the scanner sends it); longer ones are cut at a character boundary
	// and end with "…": the first lines are what a reader needs.
	MaxMessageLen = 4096
	// maxBatch is how many extinctions one audited commit writes; the rest
	// of a request goes in further commits (each write is idempotent).
	maxBatch = 90
	// chunkBytes is the most bytes of a branch's references one item holds,
	// well under DynamoDB's 400 KB item limit.
	chunkBytes = 300_000
	// MaxDeleteBranches is the most branch names one branch-delete task takes.
	MaxDeleteBranches = 1000
)

// Actions of code-reference repositories, for _access.
var Actions = []string{"createCodeRefsRepository", "deleteCodeRefsRepository", "updateCodeRefsRepositoryConfiguration",
	"updateCodeRefsRepositoryOn", "updateCodeRefsRepositoryBranches"}

// patchable maps the fields a patch may change to their actions; the name
// is the repository's key and cannot change.
var patchable = map[string]string{
	"sourceLink": "updateCodeRefsRepositoryConfiguration", "commitUrlTemplate": "updateCodeRefsRepositoryConfiguration",
	"hunkUrlTemplate": "updateCodeRefsRepositoryConfiguration", "type": "updateCodeRefsRepositoryConfiguration",
	"defaultBranch": "updateCodeRefsRepositoryConfiguration", "enabled": "updateCodeRefsRepositoryOn",
}

// Repository is a source repository a scanner reports on.
type Repository struct {
	// ID names the partition of the repository's branches and extinctions.
	ID                string `json:"id"`
	Name              string `json:"name"`
	SourceLink        string `json:"sourceLink"`
	CommitURLTemplate string `json:"commitUrlTemplate"`
	HunkURLTemplate   string `json:"hunkUrlTemplate"`
	Type              string `json:"type"`
	DefaultBranch     string `json:"defaultBranch"`
	Enabled           bool   `json:"enabled"`
	CreationDate      int64  `json:"creationDate"`
	Version           int64  `json:"-"`
}

// RepositoryInput is the body of a create.
type RepositoryInput struct {
	Name              string `json:"name"`
	SourceLink        string `json:"sourceLink"`
	CommitURLTemplate string `json:"commitUrlTemplate"`
	HunkURLTemplate   string `json:"hunkUrlTemplate"`
	Type              string `json:"type"`
	DefaultBranch     string `json:"defaultBranch"`
}

// Hunk is one place in a file that names a flag, with its context lines.
type Hunk struct {
	StartingLineNumber int      `json:"startingLineNumber"`
	Lines              string   `json:"lines,omitempty"`
	ProjKey            string   `json:"projKey,omitempty"`
	FlagKey            string   `json:"flagKey,omitempty"`
	Aliases            []string `json:"aliases,omitempty"`
}

// Reference is one file's hunks.
type Reference struct {
	Path  string `json:"path"`
	Hint  string `json:"hint,omitempty"`
	Hunks []Hunk `json:"hunks"`
}

// Branch is one scanned branch. References are loaded only by the reads
// that show them (see Service.Branch).
type Branch struct {
	Name             string `json:"name"`
	Head             string `json:"head"`
	UpdateSequenceID *int64 `json:"updateSequenceId,omitempty"`
	SyncTime         int64  `json:"syncTime"`
	CommitTime       int64  `json:"commitTime,omitempty"`
	// Counts are the hunks per project and flag of the last upload: what an
	// upload is compared with to find extinctions, and what insights read.
	Counts map[string]map[string]int `json:"counts"`
	// Chunks is how many items hold the references.
	Chunks     int         `json:"chunks"`
	References []Reference `json:"-"`
	Version    int64       `json:"-"`
}

// BranchInput is the body of an upload (putBranch).
type BranchInput struct {
	Name             *string     `json:"name"`
	Head             *string     `json:"head"`
	UpdateSequenceID *int64      `json:"updateSequenceId"`
	SyncTime         *int64      `json:"syncTime"`
	CommitTime       int64       `json:"commitTime"`
	References       []Reference `json:"references"`
}

// Extinction is a flag no longer referenced on a branch as of a revision.
type Extinction struct {
	Revision string `json:"revision"`
	Message  string `json:"message"`
	Time     int64  `json:"time"`
	ProjKey  string `json:"projKey"`
	FlagKey  string `json:"flagKey"`
	// Branch is where it happened; not part of the reference's answer.
	Branch string `json:"branch"`
}

// ExtinctionInput is one element of a postExtinction body.
type ExtinctionInput struct {
	Revision *string `json:"revision"`
	Message  *string `json:"message"`
	Time     *int64  `json:"time"`
	ProjKey  *string `json:"projKey"`
	FlagKey  *string `json:"flagKey"`
}

// validName is what ld-find-code-refs accepts as a repository name.
var validName = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// ValidName checks a repository name.
func ValidName(field, name string) error {
	if name == "" {
		return fault.New(fault.Invalid, "field %q is required", field)
	}
	if len(name) > maxNameLen || !validName.MatchString(name) {
		return fault.New(fault.Invalid, "%s %q must be 1 to %d letters, digits, '.', '_' or '-'", field, name, maxNameLen)
	}
	return nil
}

// validBranch checks a branch name: git allows almost anything, so only
// what would break storage or display is refused.
func validBranch(field, name string) error {
	if name == "" {
		return fault.New(fault.Invalid, "field %q is required", field)
	}
	if len(name) > maxBranchLen || !utf8.ValidString(name) || strings.ContainsAny(name, "\x00\n\r") {
		return fault.New(fault.Invalid, "%s must be at most %d bytes of text on one line", field, maxBranchLen)
	}
	return nil
}

func validRepoType(t string) error {
	for _, v := range repoTypes {
		if t == v {
			return nil
		}
	}
	return fault.New(fault.Invalid, "field \"type\" must be one of %s, not %q", strings.Join(repoTypes, ", "), t)
}

// check validates a repository's editable fields.
func (r *Repository) check() error {
	if err := validRepoType(r.Type); err != nil {
		return err
	}
	if err := validBranch("field \"defaultBranch\"", r.DefaultBranch); err != nil {
		return err
	}
	for field, v := range map[string]string{"sourceLink": r.SourceLink, "commitUrlTemplate": r.CommitURLTemplate, "hunkUrlTemplate": r.HunkURLTemplate} {
		if len(v) > maxURLLen {
			return fault.New(fault.Invalid, "field %q is longer than %d bytes", field, maxURLLen)
		}
		if v != "" && !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") {
			return fault.New(fault.Invalid, "field %q must be an http or https URL, not %q", field, v)
		}
	}
	return nil
}

// counts tallies the hunks of references per project and flag.
func counts(refs []Reference) map[string]map[string]int {
	out := map[string]map[string]int{}
	for _, r := range refs {
		for _, h := range r.Hunks {
			if h.FlagKey == "" {
				continue
			}
			if out[h.ProjKey] == nil {
				out[h.ProjKey] = map[string]int{}
			}
			out[h.ProjKey][h.FlagKey]++
		}
	}
	return out
}

// checkReferences validates an upload's references.
func checkReferences(refs []Reference) error {
	for i, r := range refs {
		if r.Path == "" {
			return fault.New(fault.Invalid, "field \"references[%d].path\" is required", i)
		}
		if r.Hunks == nil {
			return fault.New(fault.Invalid, "field \"references[%d].hunks\" is required", i)
		}
		for j, h := range r.Hunks {
			if h.StartingLineNumber < 0 {
				return fault.New(fault.Invalid, "field \"references[%d].hunks[%d].startingLineNumber\" must not be negative", i, j)
			}
			if strings.Contains(h.ProjKey, "#") || strings.Contains(h.FlagKey, "#") {
				return fault.New(fault.Invalid, "references[%d].hunks[%d]: project and flag keys cannot contain '#'", i, j)
			}
		}
	}
	return nil
}

// cut shortens a message to MaxMessageLen bytes at a character boundary.
func cut(s string) string {
	if len(s) <= MaxMessageLen {
		return s
	}
	const more = "…"
	end := MaxMessageLen - len(more)
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + more
}

// filterRefs keeps the hunks of one project and/or flag (empty: any), and
// the references left with hunks.
func filterRefs(refs []Reference, projKey, flagKey string) []Reference {
	if projKey == "" && flagKey == "" {
		return refs
	}
	out := []Reference{}
	for _, r := range refs {
		var hunks []Hunk
		for _, h := range r.Hunks {
			if (projKey == "" || h.ProjKey == projKey) && (flagKey == "" || h.FlagKey == flagKey) {
				hunks = append(hunks, h)
			}
		}
		if len(hunks) > 0 {
			out = append(out, Reference{Path: r.Path, Hint: r.Hint, Hunks: hunks})
		}
	}
	return out
}
