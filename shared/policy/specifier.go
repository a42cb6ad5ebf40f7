package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flagplane/flagplane/shared/fault"
)

// MaxSpecifierBytes bounds one resource specifier (and one action). Real
// specifiers are a few dozen bytes; the bound keeps a hostile role document
// from making every request's matching expensive.
const MaxSpecifierBytes = 1000

// knownKinds are the resource kinds the API uses today. Parsing accepts any
// well-formed kind (so a new kind needs no code change); this list only lets
// callers flag a probable typo, see IsKnownKind.
var knownKinds = []string{
	"adaptive-trigger", "ai-model-config", "aiconfig", "application", "auditlog",
	"code-reference-repository", "context-kind", "deployment", "destination", "env",
	"experiment", "flag", "holdout", "insight", "insight-group", "insight-repository",
	"integration", "layer", "member", "metric", "oauth-client", "proj", "relay-proxy-config",
	"release-pipeline", "release-policy", "role", "segment", "service-token",
	"team", "template", "token", "usage", "view", "webhook",
}

// KnownKinds returns the resource kinds the API uses, sorted.
func KnownKinds() []string { return slices.Clone(knownKinds) }

// IsKnownKind reports whether kind is one the API uses. A specifier with an
// unknown kind is valid but can match nothing the API builds today; the API
// layer may use this to warn about typos such as "projet".
func IsKnownKind(kind string) bool {
	_, ok := slices.BinarySearch(knownKinds, kind)
	return ok
}

// Segment is one `kind/name;tags` step of a specifier. Name may hold "*"
// globs; Tags are literal, sorted and without duplicates once parsed.
type Segment struct {
	Kind string
	Name string
	Tags []string
}

// Specifier is a parsed resource specifier: a pattern over resources of one
// exact shape (same kinds, same depth).
type Specifier struct {
	Segments []Segment
}

// ParseSpecifier parses s into a Specifier. Errors are 400 fault.Invalid
// naming the specifier and what is wrong with it.
func ParseSpecifier(s string) (Specifier, error) {
	sp, reason := parseSpecifier(s)
	if reason != "" {
		return Specifier{}, fault.New(fault.Invalid, "resource specifier %s: %s", quoteShort(s), reason)
	}
	return sp, nil
}

// quoteShort quotes user input for an error message, cutting very long
// input so that a 100 KB specifier does not become a 100 KB error.
func quoteShort(s string) string {
	const max = 80
	if len(s) <= max {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q...", s[:max])
}

// parseSpecifier returns the specifier or a non-empty reason.
func parseSpecifier(s string) (Specifier, string) {
	if s == "" {
		return Specifier{}, "is empty"
	}
	if len(s) > MaxSpecifierBytes {
		return Specifier{}, fmt.Sprintf("is %d bytes, more than the limit of %d", len(s), MaxSpecifierBytes)
	}
	n := strings.Count(s, ":") + 1
	segs := make([]Segment, 0, n)
	for i, raw := range strings.Split(s, ":") {
		if raw == "" {
			return Specifier{}, fmt.Sprintf("segment %d is empty (a leading, trailing or doubled \":\")", i+1)
		}
		seg, reason := parseSegment(raw)
		if reason != "" {
			return Specifier{}, fmt.Sprintf("segment %d %q: %s", i+1, raw, reason)
		}
		segs = append(segs, seg)
	}
	return Specifier{Segments: segs}, ""
}

func parseSegment(raw string) (Segment, string) {
	body, tagList, hasTags := strings.Cut(raw, ";")
	kind, name, ok := strings.Cut(body, "/")
	if !ok {
		return Segment{}, `missing "/" between kind and name (write kind/name, e.g. proj/*)`
	}
	if kind == "" {
		return Segment{}, "kind is empty"
	}
	if !validKind(kind) {
		return Segment{}, fmt.Sprintf(`kind %q must be lower-case letters, digits and "-", starting with a letter`, kind)
	}
	if name == "" {
		return Segment{}, `name is empty (use "*" for any)`
	}
	if c, bad := badNameByte(name); bad {
		return Segment{}, fmt.Sprintf("name %q contains %s", name, describeByte(c))
	}
	seg := Segment{Kind: kind, Name: collapseStars(name)}
	if !hasTags {
		return seg, ""
	}
	if tagList == "" {
		return Segment{}, `tag list after ";" is empty`
	}
	if strings.Contains(tagList, ";") {
		return Segment{}, `more than one ";" (list tags once, separated by ",")`
	}
	tags := strings.Split(tagList, ",")
	for j, tag := range tags {
		if tag == "" {
			return Segment{}, fmt.Sprintf("tag %d is empty", j+1)
		}
		if strings.IndexByte(tag, '*') >= 0 {
			return Segment{}, fmt.Sprintf(`tag %q: tags are literal, "*" is not allowed in a tag`, tag)
		}
		if c, bad := badTagByte(tag); bad {
			return Segment{}, fmt.Sprintf("tag %q contains %s", tag, describeByte(c))
		}
	}
	slices.Sort(tags)
	seg.Tags = slices.Compact(tags)
	return seg, ""
}

func validKind(k string) bool {
	if k[0] < 'a' || k[0] > 'z' {
		return false
	}
	for i := 1; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// Names are keys and ids of resources (letters, digits, ".", "_", "-"),
// member emails ("@", "+") and "*" globs. Everything else is refused so that
// no one believes a "\:" or "%2F" escapes a separator.
func badNameByte(s string) (byte, bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isKeyByte(c) || c == '*' || c == '@' || c == '+' {
			continue
		}
		return c, true
	}
	return 0, false
}

// Tags follow resource tag syntax: letters, digits, ".", "_", "-".
func badTagByte(s string) (byte, bool) {
	for i := 0; i < len(s); i++ {
		if !isKeyByte(s[i]) {
			return s[i], true
		}
	}
	return 0, false
}

func isKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

func describeByte(c byte) string {
	switch c {
	case '/', ':', ';', ',':
		return fmt.Sprintf("%q, a separator; escaping is not supported", c)
	case '\\':
		return `"\\"; escaping is not supported`
	}
	if c < 0x20 || c >= 0x7f {
		return fmt.Sprintf("byte 0x%02x; only ASCII letters, digits, \".\", \"_\", \"-\" (and \"@\", \"+\", \"*\" in names) are allowed", c)
	}
	return fmt.Sprintf("%q; only letters, digits, \".\", \"_\", \"-\" (and \"@\", \"+\", \"*\" in names) are allowed", c)
}

// String returns the canonical form: tags sorted without duplicates, runs of
// "*" collapsed. Parsing the canonical form gives back an equal Specifier.
func (s Specifier) String() string {
	var b strings.Builder
	for i, seg := range s.Segments {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(seg.Kind)
		b.WriteByte('/')
		b.WriteString(seg.Name)
		if len(seg.Tags) > 0 {
			b.WriteByte(';')
			b.WriteString(strings.Join(seg.Tags, ","))
		}
	}
	return b.String()
}

// Equal reports whether s and o are the same pattern.
func (s Specifier) Equal(o Specifier) bool {
	return slices.EqualFunc(s.Segments, o.Segments, func(a, b Segment) bool {
		return a.Kind == b.Kind && a.Name == b.Name && slices.Equal(a.Tags, b.Tags)
	})
}

// Matches reports whether r is one of the resources s names: the same
// number of segments with the same kinds in order, each name glob matching
// the resource's key, and, where the pattern lists tags, the resource
// segment carrying at least one of them (any-of, see the package doc).
func (s Specifier) Matches(r Resource) bool {
	if len(s.Segments) != len(r.segs) || len(s.Segments) == 0 {
		return false
	}
	// Kinds first: they are cheap and rule out most statements.
	for i := range s.Segments {
		if s.Segments[i].Kind != r.segs[i].Kind {
			return false
		}
	}
	for i := range s.Segments {
		p, seg := &s.Segments[i], &r.segs[i]
		if !globMatch(p.Name, seg.Key) {
			return false
		}
		if len(p.Tags) > 0 && !anyTag(p.Tags, seg.Tags) {
			return false
		}
	}
	return true
}

func anyTag(want, have []string) bool {
	for _, h := range have {
		for _, w := range want {
			if h == w {
				return true
			}
		}
	}
	return false
}
