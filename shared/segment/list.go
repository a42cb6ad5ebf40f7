package segment

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/listing"
)

// ListQuery selects and orders an environment's segments, as the
// reference's getSegments takes them: Filter in its expression syntax
// (listing.ParseExpr) and Sort as "field,-field".
type ListQuery struct {
	Filter string
	Sort   string
}

// filterOps are the fields and operators of the reference's segment filter.
// view is listed so that it is refused with a reason, not as unknown.
var filterOps = listing.Ops{
	"excludedKeys": {"anyOf"},
	"includedKeys": {"anyOf"},
	"external":     {"exists"},
	"query":        {"equals"},
	"tags":         {"anyOf"},
	"unbounded":    {"equals"},
	"view":         {"equals", "anyOf"},
}

// sortFields order segments; lastModifiedAt is read as lastModified, the
// name the reference gives it.
var sortFields = map[string]func(a, b *Segment) int{
	"creationDate":   func(a, b *Segment) int { return cmp.Compare(a.CreationDate, b.CreationDate) },
	"key":            func(a, b *Segment) int { return strings.Compare(a.Key, b.Key) },
	"lastModified":   func(a, b *Segment) int { return cmp.Compare(a.LastModifiedDate, b.LastModifiedDate) },
	"lastModifiedAt": func(a, b *Segment) int { return cmp.Compare(a.LastModifiedDate, b.LastModifiedDate) },
	"name":           func(a, b *Segment) int { return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)) },
}

// List returns the environment's segments that q's filter keeps, in q's
// order (by key when it names none, the key breaking ties): shared values,
// read them only. A missing environment or project is a 404 naming it; a
// filter or sort the reference does not define is a 400 naming it.
func (s *Service) List(ctx context.Context, projectKey, envKey string, q ListQuery) ([]*Segment, error) {
	keep, err := filter(q.Filter)
	if err != nil {
		return nil, err
	}
	order, err := listing.ParseSort(q.Sort, "creationDate", "key", "lastModified", "lastModifiedAt", "name")
	if err != nil {
		return nil, err
	}
	if _, err := s.envs.Get(ctx, projectKey, envKey); err != nil {
		return nil, err
	}
	all, err := s.All(ctx, projectKey, envKey)
	if err != nil {
		return nil, err
	}
	out := make([]*Segment, 0, len(all))
	for _, seg := range all {
		if keep == nil || keep(seg) {
			out = append(out, seg)
		}
	}
	listing.Sort(out, append(order, listing.SortKey{Field: "key"}), sortFields)
	return out, nil
}

// filter reads the reference's segment filter. Segments are never synced
// from an external source here, so `external exists true` keeps none.
func filter(raw string) (listing.Predicate[*Segment], error) {
	e, err := listing.ParseExpr(raw, filterOps)
	if err != nil {
		return nil, err
	}
	return listing.Build(e, func(t listing.Term) (listing.Predicate[*Segment], error) {
		switch t.Field {
		case "excludedKeys":
			return func(s *Segment) bool { return !slices.Contains(t.Values, s.Key) }, nil
		case "includedKeys":
			return func(s *Segment) bool { return slices.Contains(t.Values, s.Key) }, nil
		case "tags":
			return func(s *Segment) bool {
				return slices.ContainsFunc(s.Tags, func(tag string) bool { return slices.Contains(t.Values, tag) })
			}, nil
		case "query":
			needles := make([]string, len(t.Values))
			for i, v := range t.Values {
				needles[i] = strings.ToLower(v)
			}
			return func(s *Segment) bool {
				text := strings.ToLower(s.Key + "\x00" + s.Name + "\x00" + s.Description)
				return slices.ContainsFunc(needles, func(n string) bool { return strings.Contains(text, n) })
			}, nil
		case "unbounded", "external":
			want, err := boolTerm(t)
			if err != nil {
				return nil, err
			}
			if t.Field == "external" {
				return func(*Segment) bool { return !want }, nil
			}
			return func(s *Segment) bool { return s.Unbounded == want }, nil
		default: // view
			return nil, fault.New(fault.Invalid, "query parameter \"filter\": field \"view\" is not supported: flagplane has no views")
		}
	})
}

func boolTerm(t listing.Term) (bool, error) {
	if len(t.Values) != 1 || t.List || t.Values[0] != "true" && t.Values[0] != "false" {
		return false, fault.New(fault.Invalid, "query parameter \"filter\": %s %s takes true or false", t.Field, t.Op)
	}
	return t.Values[0] == "true", nil
}
