package jsondoc

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// Millis is a Unix-milliseconds timestamp in a request body. The spec
// shows some timestamps as JSON strings and others as integers, and a
// client may echo either form, so both are read: 1700000000000 and
// "1700000000000". null is 0. Anything else (a fraction, a negative
// number, other text) is a 400 naming the field.
type Millis int64

var millisType = reflect.TypeOf(Millis(0))

// UnmarshalJSON reads a JSON integer or a string of decimal digits.
func (m *Millis) UnmarshalJSON(b []byte) error {
	raw := strings.TrimSpace(string(b))
	if raw == "null" {
		*m = 0
		return nil
	}
	digits := raw
	if strings.HasPrefix(raw, `"`) {
		if err := json.Unmarshal(b, &digits); err != nil {
			return &json.UnmarshalTypeError{Value: "string " + raw, Type: millisType}
		}
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n < 0 {
		return &json.UnmarshalTypeError{Value: valueKind(raw), Type: millisType}
	}
	*m = Millis(n)
	return nil
}

// valueKind describes a JSON literal for an error message, as the
// standard decoder does ("string \"soon\"", "number -1", "bool", ...).
func valueKind(raw string) string {
	switch {
	case strings.HasPrefix(raw, `"`):
		return "string " + raw
	case raw == "true" || raw == "false":
		return "bool"
	case strings.HasPrefix(raw, "{"):
		return "object"
	case strings.HasPrefix(raw, "["):
		return "array"
	default:
		return "number " + raw
	}
}
