package flag

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"

	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/jsondoc"
)

// CustomProperty is a named list of values a flag carries for tools
// around it (an issue tracker's tickets, say); the reference's
// customProperty: name and value are both required.
type CustomProperty struct {
	Name string `json:"name"`
	// Value is nil only when the client sent none, which Check refuses.
	Value []string `json:"value"`
}

// CustomProperties are a flag's custom properties by key. They always
// encode as an object, {} when there are none, so a JSON patch can add a
// key to them and answers carry the field the reference requires.
type CustomProperties map[string]CustomProperty

// MarshalJSON writes nil as {}.
func (c CustomProperties) MarshalJSON() ([]byte, error) {
	if c == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(map[string]CustomProperty(c))
}

// UnmarshalJSON reads the properties one by one, so an error names the
// property's key: customProperties.<key>.value.
func (c *CustomProperties) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		*c = nil
		return nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fault.New(fault.Invalid, "field \"customProperties\" must be an object: each key holds {\"name\": a string, \"value\": a list of strings}")
	}
	out := make(CustomProperties, len(raw))
	for k, v := range raw {
		var p CustomProperty
		if err := jsondoc.UnmarshalField(v, &p, "customProperties."+k+"."); err != nil {
			return err
		}
		out[k] = p
	}
	*c = out
	return nil
}

// Limits of custom properties.
const (
	MaxCustomProperties      = 64
	MaxCustomPropertyValues  = 100
	MaxCustomPropertyKeyLen  = 256
	MaxCustomPropertyNameLen = 256
	MaxCustomPropertyValLen  = 1024
)

var customPropertyKey = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]*$`)

// checkCustomProperties verifies every property: a key of letters, digits,
// '.', '_', ':' and '-', a name, and a list of non-empty strings. Errors
// name the field, customProperties.<key>.<name|value>.
func checkCustomProperties(props CustomProperties) error {
	if len(props) > MaxCustomProperties {
		return fault.New(fault.Invalid, "field \"customProperties\" holds %d properties, at most %d allowed", len(props), MaxCustomProperties)
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if len(k) > MaxCustomPropertyKeyLen || !customPropertyKey.MatchString(k) {
			return fault.New(fault.Invalid, "field \"customProperties\": key %q must be 1 to %d letters, digits, '.', '_', ':' or '-', starting with a letter or digit", k, MaxCustomPropertyKeyLen)
		}
		p := props[k]
		field := "customProperties." + k
		switch {
		case p.Name == "":
			return fault.New(fault.Invalid, "field %q is required: the property's display name", field+".name")
		case len(p.Name) > MaxCustomPropertyNameLen:
			return fault.New(fault.Invalid, "field %q must be at most %d characters", field+".name", MaxCustomPropertyNameLen)
		case p.Value == nil:
			return fault.New(fault.Invalid, "field %q is required: a list of strings", field+".value")
		case len(p.Value) > MaxCustomPropertyValues:
			return fault.New(fault.Invalid, "field %q holds %d values, at most %d allowed", field+".value", len(p.Value), MaxCustomPropertyValues)
		}
		for i, v := range p.Value {
			if v == "" || len(v) > MaxCustomPropertyValLen {
				return fault.New(fault.Invalid, "field %q must be 1 to %d characters", fmt.Sprintf("%s.value[%d]", field, i), MaxCustomPropertyValLen)
			}
		}
	}
	return nil
}
