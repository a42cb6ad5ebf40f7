package evaluation

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/listing"
)

// Filter selects the flags to evaluate.
type Filter struct {
	// Query, when set, keeps flags whose key or name holds it, ignoring case.
	Query *string
	// Tags keeps flags having every one of them.
	Tags []string
}

// Match reports whether f passes the filter.
func (flt Filter) Match(f *flag.Flag) bool {
	if flt.Query != nil {
		q := strings.ToLower(*flt.Query)
		if !strings.Contains(strings.ToLower(f.Key), q) && !strings.Contains(strings.ToLower(f.Name), q) {
			return false
		}
	}
	for _, t := range flt.Tags {
		if !slices.Contains(f.Tags, t) {
			return false
		}
	}
	return true
}

// ParseFilter reads the filter parameter: comma-separated entries of the
// form "field operator value", as the reference documents them:
//
//	query equals dark-mode
//	tags contains ["beta","q1"]     (also [beta,q1], or one bare tag)
//
// Commas inside brackets or double quotes do not separate entries; a
// quoted query value may hold commas. The "field:value" form every other
// list of flagplane takes (query:dark, tags:beta+q1) is accepted too.
func ParseFilter(raw string) (Filter, error) {
	var out Filter
	seen := map[string]bool{}
	var colon []string
	for _, entry := range splitTopLevel(raw) {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		cut := strings.IndexAny(entry, ": \t")
		if cut < 0 {
			return Filter{}, fault.New(fault.Invalid, "filter entry %q must have the form \"field operator value\", e.g. \"query equals dark-mode\" or \"tags contains [beta,q1]\"", entry)
		}
		field := entry[:cut]
		if field != "query" && field != "tags" {
			return Filter{}, fault.New(fault.Invalid, "filter field %q is not supported; use one of query, tags", field)
		}
		if seen[field] {
			return Filter{}, fault.New(fault.Invalid, "filter field %q is given twice", field)
		}
		seen[field] = true
		if entry[cut] == ':' {
			colon = append(colon, entry)
			continue
		}
		op, value := cutSpace(strings.TrimSpace(entry[cut:]))
		switch field {
		case "query":
			if op != "equals" {
				return Filter{}, fault.New(fault.Invalid, "filter field \"query\" takes the operator \"equals\", not %q", op)
			}
			q := unquote(value)
			out.Query = &q
		case "tags":
			if op != "contains" {
				return Filter{}, fault.New(fault.Invalid, "filter field \"tags\" takes the operator \"contains\", not %q", op)
			}
			tags, err := tagList(value)
			if err != nil {
				return Filter{}, err
			}
			out.Tags = tags
		}
	}
	if len(colon) > 0 {
		f, err := listing.ParseFilter(strings.Join(colon, ","), "query", "tags")
		if err != nil {
			return Filter{}, err
		}
		if q, ok := f["query"]; ok {
			out.Query = &q
		}
		tags, ok, err := f.Tags("tags")
		if err != nil {
			return Filter{}, err
		}
		if ok {
			out.Tags = tags
		}
	}
	return out, nil
}

// cutSpace splits s at its first blank, trimming the rest.
func cutSpace(s string) (head, rest string) {
	i := strings.IndexAny(s, " \t")
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimSpace(s[i:])
}

// splitTopLevel splits at commas outside brackets and double quotes.
func splitTopLevel(s string) []string {
	var parts []string
	depth, quoted, start := 0, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '[':
			depth++
		case c == ']' && depth > 0:
			depth--
		case c == ',' && depth == 0:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// unquote strips one pair of surrounding double quotes (JSON string rules).
func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		var out string
		if json.Unmarshal([]byte(s), &out) == nil {
			return out
		}
		return s[1 : len(s)-1]
	}
	return s
}

// tagList reads ["a","b"], [a,b] or a single bare tag.
func tagList(value string) ([]string, error) {
	var tags []string
	if strings.HasPrefix(value, "[") {
		if !strings.HasSuffix(value, "]") {
			return nil, fault.New(fault.Invalid, "filter \"tags\" list %q has no closing ]", value)
		}
		if json.Unmarshal([]byte(value), &tags) != nil {
			tags = nil
			for _, t := range splitTopLevel(value[1 : len(value)-1]) {
				tags = append(tags, unquote(strings.TrimSpace(t)))
			}
		}
	} else if value != "" {
		tags = []string{unquote(value)}
	}
	tags = slices.DeleteFunc(tags, func(t string) bool { return t == "" })
	if len(tags) == 0 {
		return nil, fault.New(fault.Invalid, "filter \"tags\" needs at least one tag, e.g. tags contains [beta,q1]")
	}
	return tags, nil
}
