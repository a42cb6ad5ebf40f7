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

// Sort orders items stably by order, each field compared by its function
// in by (a field by lacks is skipped), later fields breaking ties.
func Sort[T any](items []T, order []SortKey, by map[string]func(a, b T) int) {
	slices.SortStableFunc(items, func(a, b T) int {
		for _, k := range order {
			compare, ok := by[k.Field]
			if !ok {
				continue
			}
			c := compare(a, b)
			if k.Desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
}

// Window returns items[offset : offset+limit], clamped.
func Window[T any](items []T, offset, limit int64) []T {
	if offset >= int64(len(items)) {
		return []T{}
	}
	end := min(offset+limit, int64(len(items)))
	return items[offset:end]
}

// Predicate keeps or drops one item of a list; nil keeps everything.
type Predicate[T any] func(T) bool

// Text keeps items one of whose texts contains the filter's value,
// ignoring case; nil when the field is absent.
func Text[T any](f Filter, field string, texts func(T) []string) Predicate[T] {
	q, ok := f[field]
	if !ok {
		return nil
	}
	needle := strings.ToLower(q)
	return func(item T) bool {
		return slices.ContainsFunc(texts(item), func(t string) bool { return strings.Contains(strings.ToLower(t), needle) })
	}
}

// HasTags keeps items that hold every tag of the filter field.
func HasTags[T any](f Filter, field string, tags func(T) []string) (Predicate[T], error) {
	want, ok, err := f.Tags(field)
	if err != nil || !ok {
		return nil, err
	}
	return func(item T) bool {
		have := tags(item)
		for _, t := range want {
			if !slices.Contains(have, t) {
				return false
			}
		}
		return true
	}, nil
}

// Option is one value a choice filter accepts, and what it keeps.
type Option[T any] struct {
	Value string
	Keep  func(T) bool
}

// Choice keeps what the option named by the filter's value keeps; any other
// value is a 400 listing the accepted ones.
func Choice[T any](f Filter, field string, options ...Option[T]) (Predicate[T], error) {
	raw, ok := f[field]
	if !ok {
		return nil, nil
	}
	values := make([]string, len(options))
	for i, o := range options {
		if o.Value == raw {
			return o.Keep, nil
		}
		values[i] = o.Value
	}
	return nil, fault.New(fault.Invalid, "filter %q must be %s, not %q", field, strings.Join(values, " or "), raw)
}

// Equals keeps items whose value equals the filter's.
func Equals[T any](f Filter, field string, value func(T) string) Predicate[T] {
	want, ok := f[field]
	if !ok {
		return nil
	}
	return func(item T) bool { return value(item) == want }
}

// All keeps items every non-nil predicate keeps.
func All[T any](ps ...Predicate[T]) func(T) bool {
	var active []Predicate[T]
	for _, p := range ps {
		if p != nil {
			active = append(active, p)
		}
	}
	return func(item T) bool {
		for _, p := range active {
			if !p(item) {
				return false
			}
		}
		return true
	}
}
