package openapi

import (
	"encoding"
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/flagplane/flagplane/shared/jsondoc"
)

// FormatUnixMillis marks the string timestamps of the spec
// (jsondoc.MillisString): a string of Unix milliseconds, which an answer
// to a request naming a dated LD-API-Version writes as an integer.
const FormatUnixMillis = "unix-millis"

var (
	timeType          = reflect.TypeOf(time.Time{})
	millisStringType  = reflect.TypeOf(jsondoc.MillisString(0))
	rawMessageType    = reflect.TypeOf(json.RawMessage(nil))
	marshalerType     = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
	textMarshalerType = reflect.TypeOf((*encoding.TextMarshaler)(nil)).Elem()
)

// schemas turns Go types into schemas the way encoding/json writes their
// values. Named struct types become component schemas; their names are
// given by finish, once every type is known, so a name does not depend on
// the order types were met in.
type schemas struct {
	defs map[reflect.Type]*Schema
	// refs are the $ref schemas of each named type, filled by finish.
	refs map[reflect.Type][]*Schema
}

func newSchemas() *schemas {
	return &schemas{defs: map[reflect.Type]*Schema{}, refs: map[reflect.Type][]*Schema{}}
}

// of is the schema of a value of type t. canBeNull says the value may be
// written as null: a nil pointer, slice or map not left out by omitempty.
func (g *schemas) of(t reflect.Type, canBeNull bool) *Schema {
	pointer := false
	for t.Kind() == reflect.Pointer {
		t, pointer = t.Elem(), true
	}
	s := g.nonNull(t)
	if !canBeNull || !(pointer || mayBeNull(t)) {
		return s
	}
	if s.Ref != "" {
		// OpenAPI 3.0 ignores a $ref's siblings: nullable wraps it.
		return &Schema{Nullable: true, AllOf: []*Schema{s}}
	}
	if s.Type != "" {
		s.Nullable = true
	}
	return s
}

// mayBeNull reports whether encoding/json writes a nil value of t as null.
func mayBeNull(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Slice, reflect.Map, reflect.Interface:
		return true
	}
	return false
}

func (g *schemas) nonNull(t reflect.Type) *Schema {
	switch {
	case t == timeType:
		return &Schema{Type: "string", Format: "date-time"}
	case t == millisStringType:
		return &Schema{Type: "string", Format: FormatUnixMillis, Pattern: "^-?[0-9]+$",
			Description: "Unix milliseconds as a string of digits (an integer when the request names a dated LD-API-Version)"}
	case t == rawMessageType:
		return &Schema{}
	case ownsEncoding(t):
		if implements(t, textMarshalerType) && !implements(t, marshalerType) {
			return &Schema{Type: "string"}
		}
		return &Schema{} // it writes itself: any value
	}
	switch t.Kind() {
	case reflect.Bool:
		return &Schema{Type: "boolean"}
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Uint8, reflect.Uint16:
		return &Schema{Type: "integer", Format: "int32"}
	case reflect.Int, reflect.Int64, reflect.Uint, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return &Schema{Type: "integer", Format: "int64"}
	case reflect.Float32:
		return &Schema{Type: "number", Format: "float"}
	case reflect.Float64:
		return &Schema{Type: "number", Format: "double"}
	case reflect.String:
		return &Schema{Type: "string"}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !ownsEncoding(t.Elem()) {
			return &Schema{Type: "string", Format: "byte"}
		}
		return &Schema{Type: "array", Items: g.of(t.Elem(), true)}
	case reflect.Array:
		return &Schema{Type: "array", Items: g.of(t.Elem(), true)}
	case reflect.Map:
		return &Schema{Type: "object", AdditionalProperties: g.of(t.Elem(), true)}
	case reflect.Struct:
		if t.Name() == "" {
			return g.object(t)
		}
		if _, ok := g.defs[t]; !ok {
			g.defs[t] = &Schema{} // a placeholder ends the walk of a recursive type
			*g.defs[t] = *g.object(t)
		}
		ref := &Schema{Ref: "#/components/schemas/?"} // named by finish
		g.refs[t] = append(g.refs[t], ref)
		return ref
	}
	return &Schema{} // interfaces hold anything; encoding/json refuses the other kinds
}

func implements(t, iface reflect.Type) bool {
	return t.Implements(iface) || reflect.PointerTo(t).Implements(iface)
}

// ownsEncoding reports whether t writes itself, so its fields are not the JSON's members.
func ownsEncoding(t reflect.Type) bool {
	return implements(t, marshalerType) || implements(t, textMarshalerType)
}

// object is the schema of a struct's members.
func (g *schemas) object(t reflect.Type) *Schema {
	s := &Schema{Type: "object"}
	for _, f := range jsonFields(t) {
		if s.Properties == nil {
			s.Properties = map[string]*Schema{}
		}
		var fs *Schema
		if f.quoted && quotable(f.typ) {
			fs = &Schema{Type: "string"}
		} else {
			fs = g.of(f.typ, !f.omitted)
		}
		s.Properties[f.name] = fs
		if !f.omitted && !f.optional {
			s.Required = append(s.Required, f.name)
		}
	}
	sort.Strings(s.Required)
	return s
}

// quotable reports whether the ",string" option changes how t is written.
func quotable(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.String:
		return true
	}
	return false
}

// field is one member encoding/json writes for a struct.
type field struct {
	name   string
	typ    reflect.Type
	tagged bool
	depth  int
	// omitted: omitempty or omitzero may leave it out.
	omitted bool
	// optional: it comes from an embedded pointer, absent when that is nil.
	optional bool
	quoted   bool
}

// jsonFields lists t's members as encoding/json does: tags name them, "-"
// drops one, the fields of untagged embedded structs are promoted, and of
// several fields with one name the shallowest wins, a tagged one breaking
// a tie (an unbroken tie drops them all).
func jsonFields(t reflect.Type) []field {
	type level struct {
		t        reflect.Type
		depth    int
		optional bool
	}
	var all []field
	visited := map[reflect.Type]bool{}
	next := []level{{t, 0, false}}
	for len(next) > 0 {
		current := next
		next = nil
		for _, l := range current {
			if visited[l.t] {
				continue
			}
			visited[l.t] = true
			for i := 0; i < l.t.NumField(); i++ {
				sf := l.t.Field(i)
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				options := strings.Split(opts, ",")
				ft := sf.Type
				if sf.Anonymous {
					inner, viaPointer := ft, false
					if inner.Kind() == reflect.Pointer {
						inner, viaPointer = inner.Elem(), true
					}
					if !sf.IsExported() && inner.Kind() != reflect.Struct {
						continue
					}
					if name == "" && inner.Kind() == reflect.Struct {
						next = append(next, level{inner, l.depth + 1, l.optional || viaPointer})
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				f := field{name: name, typ: ft, tagged: name != "", depth: l.depth, optional: l.optional,
					omitted: slices.Contains(options, "omitempty") || slices.Contains(options, "omitzero"),
					quoted:  slices.Contains(options, "string")}
				if !f.tagged {
					f.name = sf.Name
				}
				all = append(all, f)
			}
		}
	}
	byName := map[string][]field{}
	var names []string
	for _, f := range all {
		if _, ok := byName[f.name]; !ok {
			names = append(names, f.name)
		}
		byName[f.name] = append(byName[f.name], f)
	}
	var out []field
	for _, n := range names {
		if f, ok := dominant(byName[n]); ok {
			out = append(out, f)
		}
	}
	return out
}

// dominant is the field encoding/json writes of several with one name.
func dominant(fs []field) (field, bool) {
	top := fs[0].depth
	for _, f := range fs {
		top = min(top, f.depth)
	}
	var shallow, tagged []field
	for _, f := range fs {
		if f.depth == top {
			shallow = append(shallow, f)
			if f.tagged {
				tagged = append(tagged, f)
			}
		}
	}
	switch {
	case len(shallow) == 1:
		return shallow[0], true
	case len(tagged) == 1:
		return tagged[0], true
	}
	return field{}, false
}

var (
	typeArgPath  = regexp.MustCompile(`[A-Za-z0-9_.\-]*/`)
	notNameChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)
)

// finish names the component schemas and fills every $ref: an exported
// type's own name when no other type has it, else its package's name and
// its own ("flag.Rule", "destinationapi.rep"), else its whole import path.
func (g *schemas) finish() map[string]*Schema {
	short := func(t reflect.Type) string {
		// Generic types: Page[github.com/x/flag.Flag] becomes Page_flag.Flag.
		n := typeArgPath.ReplaceAllString(t.Name(), "")
		return strings.Trim(notNameChars.ReplaceAllString(n, "_"), "_")
	}
	qualified := func(t reflect.Type) string {
		return t.PkgPath()[strings.LastIndex(t.PkgPath(), "/")+1:] + "." + short(t)
	}
	full := func(t reflect.Type) string {
		return strings.Trim(notNameChars.ReplaceAllString(t.PkgPath()+"."+short(t), "_"), "_")
	}
	count := func(name func(reflect.Type) string) map[string]int {
		n := map[string]int{}
		for t := range g.defs {
			n[name(t)]++
		}
		return n
	}
	shortCount, qualifiedCount := count(short), count(qualified)
	out := map[string]*Schema{}
	for t, s := range g.defs {
		name := short(t)
		switch {
		case shortCount[name] == 1 && !unicode.IsLower([]rune(name)[0]):
		case qualifiedCount[qualified(t)] == 1:
			name = qualified(t)
		default:
			name = full(t)
		}
		out[name] = s
		for _, ref := range g.refs[t] {
			ref.Ref = "#/components/schemas/" + name
		}
	}
	return out
}
