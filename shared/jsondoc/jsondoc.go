// Package jsondoc is the one JSON decoder for documents from clients:
// request bodies and the results of applying a client's patch.
package jsondoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/flagplane/flagplane/shared/fault"
)

// Unmarshal decodes exactly one JSON value into v. Unknown fields are
// ignored; a value of the wrong type is a 400 naming the field's path.
func Unmarshal(data []byte, v any) error {
	return UnmarshalField(data, v, "")
}

// UnmarshalField is Unmarshal for a value nested in a larger document:
// prefix (e.g. "environments[1].") starts the field names in errors.
func UnmarshalField(data []byte, v any, prefix string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return describe(err, prefix)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fault.New(fault.Invalid, "request body holds more than one JSON value")
	}
	return nil
}

func describe(err error, prefix string) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	var own *fault.Error
	switch {
	case errors.As(err, &own) && own.Code == fault.Invalid:
		return own // a type's own decoder named the field already
	case errors.As(err, &typeErr):
		want := typeName(typeErr.Type.Kind().String())
		if typeErr.Type == millisType {
			want = "Unix milliseconds, as an integer or a string of digits"
		}
		if typeErr.Field == "" && prefix == "" {
			return fault.New(fault.Invalid, "request body must be %s, not %s", want, typeErr.Value)
		}
		field := strings.TrimSuffix(prefix+typeErr.Field, ".")
		return fault.New(fault.Invalid, "field %q must be %s, not %s", field, want, typeErr.Value)
	case errors.As(err, &syntaxErr):
		return fault.New(fault.Invalid, "request body is not valid JSON (at byte %d): %s", syntaxErr.Offset, syntaxErr.Error())
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return fault.New(fault.Invalid, "request body is not valid JSON: it ends too early")
	default:
		return fault.New(fault.Invalid, "request body is not valid JSON: %s", err.Error())
	}
}

// typeName turns a Go kind into the JSON type a client would recognise.
func typeName(kind string) string {
	switch {
	case kind == "string":
		return "a string"
	case kind == "bool":
		return "a boolean"
	case strings.HasPrefix(kind, "int"), strings.HasPrefix(kind, "uint"):
		return "an integer"
	case strings.HasPrefix(kind, "float"):
		return "a number"
	case kind == "slice", kind == "array":
		return "an array"
	case kind == "map", kind == "struct", kind == "ptr":
		return "an object"
	default:
		return "a " + kind
	}
}
