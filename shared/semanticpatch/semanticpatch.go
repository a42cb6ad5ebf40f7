// Package semanticpatch reads the envelope of a semantic patch, the
// instruction-list form of an update (Content-Type with
// domain-model=flagplane.semanticpatch), and gives its errors one shape:
// every error names the index and kind of the instruction it is about.
//
// The instructions themselves belong to the resource they change: the
// flag engine (package flag) runs flag instructions; approval requests
// and expiring targets store and replay []Instruction as they came.
package semanticpatch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/jsondoc"
)

// MaxInstructions is the most instructions one patch may hold.
const MaxInstructions = 200

// Instruction is one instruction as sent: its kind, and the whole object
// (kind included) for the resource's engine to decode its parameters from.
// It marshals back to exactly that object.
type Instruction struct {
	Kind string
	Raw  json.RawMessage
}

// New builds an instruction of kind with params (any JSON object value,
// nil for none), for callers that make instructions themselves, e.g. a job
// removing expired targets.
func New(kind string, params map[string]any) Instruction {
	obj := map[string]any{}
	for k, v := range params {
		obj[k] = v
	}
	obj["kind"] = kind
	raw, _ := json.Marshal(obj) // a map of JSON values always encodes
	return Instruction{Kind: kind, Raw: raw}
}

// MarshalJSON writes the instruction as it was sent.
func (in Instruction) MarshalJSON() ([]byte, error) {
	if len(in.Raw) == 0 {
		return json.Marshal(map[string]string{"kind": in.Kind})
	}
	return in.Raw, nil
}

// UnmarshalJSON keeps the object and reads its kind. Shape errors (not an
// object, no kind) are left to Parse, which can name the index.
func (in *Instruction) UnmarshalJSON(b []byte) error {
	in.Raw = append(json.RawMessage(nil), b...)
	in.Kind = ""
	var head struct {
		Kind any `json:"kind"`
	}
	if json.Unmarshal(b, &head) == nil {
		in.Kind, _ = head.Kind.(string)
	}
	return nil
}

// Patch is a semantic patch body.
type Patch struct {
	Comment        string        `json:"comment"`
	EnvironmentKey string        `json:"environmentKey"`
	Instructions   []Instruction `json:"instructions"`
}

// Parse reads a semantic patch body: an object with a non-empty
// "instructions" array of objects, each with a string "kind". Anything
// else is a 400 naming what is wrong (and the index of a bad instruction).
// The parameters of each instruction are checked by the resource's engine.
func Parse(body []byte) (Patch, error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return Patch{}, fault.New(fault.Invalid, "a semantic patch body must be an object with \"instructions\" (and optional \"comment\" and \"environmentKey\")")
	}
	var envelope struct {
		Comment        string            `json:"comment"`
		EnvironmentKey string            `json:"environmentKey"`
		Instructions   []json.RawMessage `json:"instructions"`
	}
	if err := jsondoc.Unmarshal(trimmed, &envelope); err != nil {
		return Patch{}, err
	}
	if envelope.Instructions == nil {
		return Patch{}, fault.New(fault.Invalid, "field \"instructions\" is required: a semantic patch is a list of instructions")
	}
	if len(envelope.Instructions) == 0 {
		return Patch{}, fault.New(fault.Invalid, "field \"instructions\" must hold at least one instruction")
	}
	if len(envelope.Instructions) > MaxInstructions {
		return Patch{}, fault.New(fault.Invalid, "field \"instructions\" holds %d instructions, at most %d allowed", len(envelope.Instructions), MaxInstructions)
	}
	p := Patch{Comment: envelope.Comment, EnvironmentKey: envelope.EnvironmentKey, Instructions: make([]Instruction, len(envelope.Instructions))}
	for i, raw := range envelope.Instructions {
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || raw[0] != '{' {
			return Patch{}, Invalid(i, "", "must be an object with a \"kind\"")
		}
		var in Instruction
		_ = in.UnmarshalJSON(raw)
		if in.Kind == "" {
			return Patch{}, Invalid(i, "", "field \"kind\" is required and must be a non-empty string")
		}
		p.Instructions[i] = in
	}
	return p, nil
}

// HasInstructions reports whether body is a JSON object with an
// "instructions" member: the shape of a semantic patch, for operations that
// take nothing else (or that tell it from a JSON patch by its shape) when a
// client, like LaunchDarkly's Go client, sends plain application/json.
func HasInstructions(body []byte) bool {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return false
	}
	var probe struct {
		Instructions json.RawMessage `json:"instructions"`
	}
	return json.Unmarshal(trimmed, &probe) == nil && probe.Instructions != nil
}

// Decode reads the parameters of the instruction at index into v; a
// parameter of the wrong JSON type is a 400 naming instructions[index].field.
func Decode(in Instruction, index int, v any) error {
	err := jsondoc.UnmarshalField(in.Raw, v, Field(index, ""))
	if err == nil {
		return nil
	}
	return newError(fault.CodeOf(err), index, in.Kind, "%s", fault.MessageOf(err))
}

// Strings reads the parameter param of the instruction at index, which
// must be a non-empty array of non-empty strings (keys, tags): a 400
// naming it otherwise.
func Strings(index int, kind string, raw json.RawMessage, param string) ([]string, error) {
	field := Field(index, param)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, Invalid(index, kind, "field %q is required", field)
	}
	var out []string
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, Invalid(index, kind, "field %q must be an array of strings", field)
	}
	if len(out) == 0 {
		return nil, Invalid(index, kind, "field %q must hold at least one value", field)
	}
	for j, s := range out {
		if s == "" {
			return nil, Invalid(index, kind, "field \"%s[%d]\" must not be empty", field, j)
		}
	}
	return out, nil
}

// AddStrings adds to *list the strings of the parameter param (as Strings
// reads them) it does not hold yet: addTags, in every engine.
func AddStrings(index int, kind string, raw json.RawMessage, param string, list *[]string) error {
	values, err := Strings(index, kind, raw, param)
	if err != nil {
		return err
	}
	for _, v := range values {
		if !slices.Contains(*list, v) {
			*list = append(*list, v)
		}
	}
	return nil
}

// RemoveStrings removes from *list the strings of the parameter param;
// those it does not hold are not an error: removeTags, in every engine.
func RemoveStrings(index int, kind string, raw json.RawMessage, param string, list *[]string) error {
	values, err := Strings(index, kind, raw, param)
	if err != nil {
		return err
	}
	*list = slices.DeleteFunc(*list, func(v string) bool { return slices.Contains(values, v) })
	return nil
}

// Reorder returns items in the order of ids, which must name every item
// (by id) once, or false: reorderRules, in every engine.
func Reorder[T any](items []T, id func(T) string, ids []string) ([]T, bool) {
	if len(ids) != len(items) {
		return nil, false
	}
	at := make(map[string]int, len(items))
	for j, it := range items {
		at[id(it)] = j
	}
	out := make([]T, 0, len(items))
	for _, k := range ids {
		j, ok := at[k]
		if !ok {
			return nil, false
		}
		delete(at, k)
		out = append(out, items[j])
	}
	return out, true
}

// String reads the parameter param of the instruction at index, which
// must be a string: a 400 naming it otherwise.
func String(index int, kind string, raw json.RawMessage, param string) (string, error) {
	field := Field(index, param)
	if len(raw) == 0 || string(raw) == "null" {
		return "", Invalid(index, kind, "field %q is required", field)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", Invalid(index, kind, "field %q must be a string", field)
	}
	return s, nil
}

// Field names a parameter of the instruction at index, as error messages
// name it: instructions[2].variationId.
func Field(index int, param string) string {
	if param == "" {
		return fmt.Sprintf("instructions[%d].", index)
	}
	return fmt.Sprintf("instructions[%d].%s", index, param)
}

// Error is a failure of one instruction. It unwraps to a *fault.Error whose
// code decides the status (400 for a malformed instruction, 422 for one
// that does not apply to the resource) and whose message names the index.
type Error struct {
	Index int
	Kind  string
	Err   *fault.Error
}

func (e *Error) Error() string { return e.Err.Error() }

// Unwrap exposes the fault, so fault.CodeOf and fault.MessageOf read it.
func (e *Error) Unwrap() error { return e.Err }

// Code is the fault code: fault.Invalid or fault.PatchFailed.
func (e *Error) Code() fault.Code { return e.Err.Code }

// Reason is the message without the instruction prefix.
func (e *Error) Reason() string { return strings.TrimPrefix(e.Err.Message, prefix(e.Index, e.Kind)) }

func prefix(index int, kind string) string {
	if kind == "" {
		return fmt.Sprintf("instructions[%d]: ", index)
	}
	return fmt.Sprintf("instructions[%d] (%s): ", index, kind)
}

func newError(code fault.Code, index int, kind, format string, args ...any) *Error {
	msg := prefix(index, kind) + fmt.Sprintf(format, args...)
	return &Error{Index: index, Kind: kind, Err: &fault.Error{Code: code, Message: msg}}
}

// Invalid is a 400 for a malformed instruction: an unknown kind, a missing
// or ill-typed parameter, a value no resource could accept.
func Invalid(index int, kind, format string, args ...any) *Error {
	return newError(fault.Invalid, index, kind, format, args...)
}

// Failed is a 422 patch_failed for an instruction that is well formed but
// does not apply to the resource as it is (an unknown variation or rule
// id, a change that would break the resource's rules).
func Failed(index int, kind, format string, args ...any) *Error {
	return newError(fault.PatchFailed, index, kind, format, args...)
}

// At wraps err, raised while running the instruction at index, in an
// *Error: an *Error passes through, a *fault.Error keeps its code (Invalid
// stays 400 unless asFailed, which turns it into 422), anything else is
// returned unchanged (an internal failure).
func At(err error, index int, kind string, asFailed bool) error {
	if err == nil {
		return nil
	}
	var ie *Error
	if errors.As(err, &ie) {
		return ie
	}
	var fe *fault.Error
	if !errors.As(err, &fe) {
		return err
	}
	code := fe.Code
	if asFailed && code == fault.Invalid {
		code = fault.PatchFailed
	}
	return newError(code, index, kind, "%s", fe.Message)
}

// IndexOf returns the index of the instruction err is about, if any.
func IndexOf(err error) (int, bool) {
	var ie *Error
	if errors.As(err, &ie) {
		return ie.Index, true
	}
	return 0, false
}
