package policy

// ResourceOf is the resource a concrete specifier names, such as
// "proj/p:env/e;tag" (an audit entry's access), for matching statements
// against it; ok is false when s does not parse or names nothing.
func ResourceOf(s string) (r Resource, ok bool) {
	sp, err := ParseSpecifier(s)
	if err != nil || len(sp.Segments) == 0 {
		return Resource{}, false
	}
	for i, seg := range sp.Segments {
		if i == 0 {
			r = NewResource(seg.Kind, seg.Name, seg.Tags...)
		} else {
			r = r.Child(seg.Kind, seg.Name, seg.Tags...)
		}
	}
	return r, true
}
