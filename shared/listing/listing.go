// Package listing parses the filter and sort parameters that collection
// reads share, and cuts the requested window out of a result.
package listing

import (
	"slices"
	"strings"

	"github.com/flagplane/flagplane/shared/fault"
)

// Filter maps a filter field to its raw value.
type Filter map[string]string

// ParseFilter reads "field:value,field:value", refusing fields not in allowed.
func ParseFilter(raw string, allowed ...string) (Filter, error) {
	f := Filter{}
	if strings.TrimSpace(raw) == "" {
		return f, nil
	}
	for _, entry := range strings.Split(raw, ",") {
		field, value, ok := strings.Cut(strings.TrimSpace(entry), ":")
		field = strings.TrimSpace(field)
		if !ok || field == "" {
			return nil, fault.New(fault.Invalid, "filter entry %q must have the form field:value", entry)
		}
		if !slices.Contains(allowed, field) {
			return nil, fault.New(fault.Invalid, "filter field %q is not supported; use one of %s", field, strings.Join(allowed, ", "))
		}
		if _, dup := f[field]; dup {
			return nil, fault.New(fault.Invalid, "filter field %q is given twice", field)
		}
		f[field] = strings.TrimSpace(value)
	}
	return f, nil
}

// Tags reads a "+"-separated tag filter (a "+" sent unencoded arrives as a
// space, so spaces separate too); ok is false when the field is absent.
func (f Filter) Tags(field string) (tags []string, ok bool, err error) {
	raw, ok := f[field]
	if !ok {
		return nil, false, nil
	}
	tags = strings.FieldsFunc(raw, func(r rune) bool { return r == '+' || r == ' ' })
	if len(tags) == 0 {
		return nil, true, fault.New(fault.Invalid, "filter %q needs at least one tag", field)
	}
	return tags, true, nil
}

// SortKey is one field of a sort order.
type SortKey struct {
	Field string
	Desc  bool
}

// ParseSort reads "field,-field", refusing fields not in allowed.
func ParseSort(raw string, allowed ...string) ([]SortKey, error) {
	var keys []SortKey
	if strings.TrimSpace(raw) == "" {
		return keys, nil
	}
	for _, part := range strings.Split(raw, ",") {
		part = strings.TrimSpace(part)
		k := SortKey{Field: strings.TrimPrefix(part, "-"), Desc: strings.HasPrefix(part, "-")}
		if !slices.Contains(allowed, k.Field) {
			return nil, fault.New(fault.Invalid, "sort field %q is not supported; use one of %s", part, strings.Join(allowed, ", "))
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// Window returns items[offset : offset+limit], clamped.
func Window[T any](items []T, offset, limit int64) []T {
	if offset >= int64(len(items)) {
		return []T{}
	}
	end := min(offset+limit, int64(len(items)))
	return items[offset:end]
}
