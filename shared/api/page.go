package api

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/flagplane/flagplane/shared/fault"
)

// IntParam reads an optional integer query parameter within [min, max].
func IntParam(q url.Values, name string, def, min, max int64) (int64, error) {
	raw := q.Get(name)
	if raw == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		return 0, fault.New(fault.Invalid, "query parameter %q must be an integer, not %q", name, raw)
	}
	if n < min || n > max {
		return 0, fault.New(fault.Invalid, "query parameter %q must be between %d and %d, not %d", name, min, max, n)
	}
	return n, nil
}

// BoolParam reads an optional boolean query parameter.
func BoolParam(q url.Values, name string, def bool) (bool, error) {
	raw := q.Get(name)
	if raw == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(raw)
	if err != nil {
		return false, fault.New(fault.Invalid, "query parameter %q must be true or false, not %q", name, raw)
	}
	return b, nil
}

// Expand reads the expand query parameter, every value of it, each a
// comma-separated list: the names it holds, refusing one that is not among
// allowed.
func Expand(q url.Values, allowed ...string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, raw := range q["expand"] {
		for _, name := range strings.Split(raw, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			if !slices.Contains(allowed, name) {
				return nil, fault.New(fault.Invalid, "query parameter \"expand\": %q is not one of %s", name, strings.Join(allowed, ", "))
			}
			out[name] = true
		}
	}
	return out, nil
}

// MaxPage is the largest limit the offset-paged lists (projects,
// environments, roles, members, teams, tokens) accept.
const MaxPage = 1000

// OffsetParams reads the limit (default def, 1 to max) and offset of an offset-paged list.
func OffsetParams(q url.Values, def, max int64) (offset, limit int64, err error) {
	if limit, err = IntParam(q, "limit", def, 1, max); err != nil {
		return 0, 0, err
	}
	if offset, err = IntParam(q, "offset", 0, 0, 1<<31); err != nil {
		return 0, 0, err
	}
	return offset, limit, nil
}

// OffsetLinks builds the page links of an offset-paged list: self always;
// first and prev only after the first page; next and last only when a later
// page exists. path is the collection path; q the request's query, whose
// other parameters (filter, sort, ...) every link keeps.
func OffsetLinks(path string, q url.Values, offset, limit, total int64) Links {
	at := func(off int64) Link {
		v := url.Values{}
		for k, vals := range q {
			v[k] = vals
		}
		v.Set("limit", strconv.FormatInt(limit, 10))
		v.Set("offset", strconv.FormatInt(off, 10))
		return JSONLink(path + "?" + v.Encode())
	}
	var lastStart int64
	if total > 0 {
		lastStart = ((total - 1) / limit) * limit
	}
	links := Links{"self": at(offset)}
	if offset > 0 {
		links["first"] = at(0)
		// Past the end, prev is the last page that exists.
		links["prev"] = at(min(max(offset-limit, 0), lastStart))
	}
	if offset+limit < total {
		links["next"] = at(offset + limit)
		links["last"] = at(lastStart)
	}
	return links
}

// CursorLinks builds the links of a cursor-paged list: self, and next when
// cursor is not empty, carried in the parameter named param.
func CursorLinks(path string, q url.Values, param, cursor string) Links {
	self := path
	if enc := q.Encode(); enc != "" {
		self += "?" + enc
	}
	links := Links{"self": JSONLink(self)}
	if cursor != "" {
		v := url.Values{}
		for k, vals := range q {
			v[k] = vals
		}
		v.Set(param, cursor)
		links["next"] = JSONLink(path + "?" + v.Encode())
	}
	return links
}
