package jsondoc

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// MillisString is a Unix-milliseconds timestamp in an answer where the
// spec types it as a JSON string of digits ("1700000000000") and
// LaunchDarkly's reference as an integer. It is written as the spec's
// string; StringMillisAsIntegers rewrites it as an integer for clients
// that ask for LaunchDarkly's types (a dated LD-API-Version, see
// api.WriteJSON). It reads either form, as Millis does. Zero is "0";
// omitempty leaves it out.
//
// The fields of that kind, found by comparing the spec's part 2 with the
// reference, and so the ones a dated version answers as integers:
// OAuth client _creationDate (2.3); insight group createdAt and its
// scoreMetadata periods' startTime and endTime (2.5); approval request
// creationDate, appliedDate, executionDate and allReviews[].creationDate
// (2.7); access token creationDate, lastModified, lastUsed and expiry
// (2.10); warehouse destination createdAt (2.16); flag import
// _status.lastImport and lastError (2.18); audit log entry date (2.19);
// big segment store _status.lastSync and lastError (2.20); flag event
// eventTime (2.22). A release pipeline's createdAt (2.8) is not one: the
// reference has a date-time string there.
type MillisString int64

var millisStringType = reflect.TypeOf(MillisString(0))

// MarshalJSON writes the spec's form, a string of decimal digits.
func (m MillisString) MarshalJSON() ([]byte, error) {
	return strconv.AppendQuote(nil, strconv.FormatInt(int64(m), 10)), nil
}

// UnmarshalJSON reads a JSON integer or a string of decimal digits.
func (m *MillisString) UnmarshalJSON(b []byte) error {
	var n Millis
	if err := n.UnmarshalJSON(b); err != nil {
		return &json.UnmarshalTypeError{Value: valueKind(string(bytes.TrimSpace(b))), Type: millisStringType}
	}
	*m = MillisString(n)
	return nil
}

// StringMillisAsIntegers returns body, the JSON encoding of v, with every
// MillisString in v written as a JSON integer instead of a string: the
// type LaunchDarkly's clients decode. Only the members v's Go types mark
// as MillisString change; a string of digits elsewhere (a flag's variation
// value, a free-form config) is left as it is. A MillisString inside a
// type with its own MarshalJSON is not seen and stays a string.
func StringMillisAsIntegers(v any, body []byte) ([]byte, error) {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() || !mayHoldMillisString(rv.Type()) {
		return body, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // numbers are written back exactly as they were
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	return json.Marshal(millisAsIntegers(rv, doc))
}

var (
	marshalerType     = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
	textMarshalerType = reflect.TypeOf((*encoding.TextMarshaler)(nil)).Elem()
	mayHoldCache      sync.Map // reflect.Type -> bool
)

// ownsEncoding reports whether t writes itself (so its fields are not the JSON's members).
func ownsEncoding(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(marshalerType) || pt.Implements(marshalerType) ||
		t.Implements(textMarshalerType) || pt.Implements(textMarshalerType)
}

// mayHoldMillisString reports whether a value of type t can hold a
// MillisString (an interface may hold anything), so answers without one
// are written untouched.
func mayHoldMillisString(t reflect.Type) bool {
	if v, ok := mayHoldCache.Load(t); ok {
		return v.(bool)
	}
	holds := mayHold(t, map[reflect.Type]bool{})
	mayHoldCache.Store(t, holds)
	return holds
}

// mayHold is mayHoldMillisString without the cache; visiting ends the
// walk of a recursive type.
func mayHold(t reflect.Type, visiting map[reflect.Type]bool) bool {
	switch {
	case t == millisStringType || t.Kind() == reflect.Interface:
		return true
	case visiting[t] || ownsEncoding(t):
		return false
	}
	visiting[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return mayHold(t.Elem(), visiting)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if mayHold(t.Field(i).Type, visiting) {
				return true
			}
		}
	}
	return false
}

// millisAsIntegers walks v and doc, its decoded JSON, together, and
// returns doc with the MillisString members as numbers.
func millisAsIntegers(v reflect.Value, doc any) any {
	if !v.IsValid() || doc == nil {
		return doc
	}
	t := v.Type()
	if t == millisStringType {
		if s, ok := doc.(string); ok {
			if _, err := strconv.ParseInt(s, 10, 64); err == nil {
				return json.Number(s)
			}
		}
		return doc
	}
	if !mayHoldMillisString(t) {
		return doc
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return doc
		}
		return millisAsIntegers(v.Elem(), doc)
	case reflect.Slice, reflect.Array:
		list, ok := doc.([]any)
		if !ok {
			return doc
		}
		for i := 0; i < v.Len() && i < len(list); i++ {
			list[i] = millisAsIntegers(v.Index(i), list[i])
		}
	case reflect.Map:
		obj, ok := doc.(map[string]any)
		if !ok || t.Key().Kind() != reflect.String {
			return doc
		}
		iter := v.MapRange()
		for iter.Next() {
			name := iter.Key().String()
			if member, ok := obj[name]; ok {
				obj[name] = millisAsIntegers(iter.Value(), member)
			}
		}
	case reflect.Struct:
		if obj, ok := doc.(map[string]any); ok {
			structMembers(v, obj)
		}
	}
	return doc
}

// structMembers rewrites the members of obj that v's fields wrote, by
// encoding/json's naming: the tag's name, else the field's; the fields of
// an untagged embedded struct are the object's own.
func structMembers(v reflect.Value, obj map[string]any) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || !mayHoldMillisString(f.Type) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if slices.Contains(strings.Split(opts, ","), "string") {
			continue // ",string" writes numbers as strings on purpose
		}
		fv := v.Field(i)
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				if fv.IsNil() {
					continue
				}
				fv, ft = fv.Elem(), ft.Elem()
			}
			if ft.Kind() == reflect.Struct && !ownsEncoding(ft) {
				structMembers(fv, obj)
				continue
			}
		}
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if member, ok := obj[name]; ok {
			obj[name] = millisAsIntegers(fv, member)
		}
	}
}
