package policy

import (
	"slices"
	"strings"
)

// Resource is the concrete thing a request acts on, from the outermost
// container in: proj/shop, then env/production, then flag/new-checkout.
// Keys are literal (a "*" in a key is just a character) and each segment
// carries the tags the stored resource has, for `;tag` patterns to test.
//
// A Resource is immutable: Child returns a new value and never writes to
// the receiver's storage, so a parent can be shared between goroutines.
type Resource struct {
	segs []ResourceSegment
}

// ResourceSegment is one step of a Resource.
type ResourceSegment struct {
	Kind string
	Key  string
	Tags []string
}

// NewResource starts a resource at its top-level kind, e.g.
// NewResource("proj", "shop", "mobile"). The tags slice is kept as given
// (no copy on the request path); the package never modifies it.
func NewResource(kind, key string, tags ...string) Resource {
	return Resource{segs: []ResourceSegment{{Kind: kind, Key: key, Tags: tags}}}
}

// Child returns r extended by one nested segment, e.g.
// NewResource("proj", "shop").Child("env", "production").
func (r Resource) Child(kind, key string, tags ...string) Resource {
	// The full slice expression caps capacity so append always copies:
	// two children of one parent must not share a backing array.
	segs := append(r.segs[:len(r.segs):len(r.segs)], ResourceSegment{Kind: kind, Key: key, Tags: tags})
	return Resource{segs: segs}
}

// WithKey returns r with the key of its segments of kind replaced by key
// (r itself when key is empty): the one resource of a wildcard the
// request acts on.
func (r Resource) WithKey(kind, key string) Resource {
	if key == "" {
		return r
	}
	out := Resource{segs: slices.Clone(r.segs)}
	for i := range out.segs {
		if out.segs[i].Kind == kind {
			out.segs[i].Key = key
		}
	}
	return out
}

// Segments returns a copy of r's segments, outermost first.
func (r Resource) Segments() []ResourceSegment { return slices.Clone(r.segs) }

// Enclosing returns the resources from r's outermost container in to r
// itself: proj/shop, proj/shop:env/production, then r. Reads are decided
// along this chain, so a deny on a project or an environment hides what
// it holds.
func (r Resource) Enclosing() []Resource {
	out := make([]Resource, len(r.segs))
	for i := range r.segs {
		// Capped like Child's, so no two share room to grow into.
		out[i] = Resource{segs: r.segs[: i+1 : i+1]}
	}
	return out
}

// Kind returns the kind of the innermost segment ("" for the zero Resource);
// the API layer uses it to pick the actions `_access` reports.
func (r Resource) Kind() string {
	if len(r.segs) == 0 {
		return ""
	}
	return r.segs[len(r.segs)-1].Kind
}

// Key returns the key of the innermost segment.
func (r Resource) Key() string {
	if len(r.segs) == 0 {
		return ""
	}
	return r.segs[len(r.segs)-1].Key
}

// String returns the resource in specifier form, each segment's tags after
// ";": proj/shop:env/production;critical. Error messages show it, so a
// refusal names what a tag-selecting statement was matched against.
func (r Resource) String() string {
	var b strings.Builder
	for i, s := range r.segs {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(s.Kind)
		b.WriteByte('/')
		b.WriteString(s.Key)
		for j, t := range s.Tags {
			if j == 0 {
				b.WriteByte(';')
			} else {
				b.WriteByte(',')
			}
			b.WriteString(t)
		}
	}
	return b.String()
}
