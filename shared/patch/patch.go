// Package patch parses and applies RFC 6902 JSON patches, the one way every
// resource takes a JSON-patch update.
package patch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/jsondoc"
)

// Op is one patch operation.
type Op struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	From  string          `json:"from,omitempty"`
	Value json.RawMessage `json:"value,omitempty"`
}

// Patch is a parsed JSON patch with the request's optional comment.
type Patch struct {
	Ops     []Op
	Comment string
	// Raw is the patch array as sent; it becomes the audit entry's delta.
	Raw json.RawMessage
}

var validOps = map[string]bool{"add": true, "remove": true, "replace": true, "move": true, "copy": true, "test": true}

// Parse accepts a JSON array of operations, or {"comment": ..., "patch": [...]}.
func Parse(body []byte) (Patch, error) {
	trimmed := bytes.TrimSpace(body)
	var p Patch
	var raw json.RawMessage
	switch {
	case len(trimmed) > 0 && trimmed[0] == '[':
		raw = trimmed
	case len(trimmed) > 0 && trimmed[0] == '{':
		var wrapper struct {
			Comment string          `json:"comment"`
			Patch   json.RawMessage `json:"patch"`
		}
		if err := json.Unmarshal(trimmed, &wrapper); err != nil {
			return Patch{}, fault.New(fault.Invalid, "patch body must be a JSON array of operations or an object with \"patch\" and \"comment\": %s", err.Error())
		}
		if len(wrapper.Patch) == 0 {
			return Patch{}, fault.New(fault.Invalid, "field \"patch\" is required and must be an array of operations")
		}
		p.Comment = wrapper.Comment
		raw = wrapper.Patch
	default:
		return Patch{}, fault.New(fault.Invalid, "patch body must be a JSON array of operations")
	}
	if err := json.Unmarshal(raw, &p.Ops); err != nil {
		return Patch{}, fault.New(fault.Invalid, "patch must be an array of objects with op, path and value: %s", err.Error())
	}
	if len(p.Ops) == 0 {
		return Patch{}, fault.New(fault.Invalid, "patch has no operations")
	}
	for i, op := range p.Ops {
		if !validOps[op.Op] {
			return Patch{}, fault.New(fault.Invalid, "patch operation %d: op %q is not one of add, remove, replace, move, copy, test", i, op.Op)
		}
		if !strings.HasPrefix(op.Path, "/") {
			return Patch{}, fault.New(fault.Invalid, "patch operation %d: path %q must start with /", i, op.Path)
		}
		if (op.Op == "move" || op.Op == "copy") && !strings.HasPrefix(op.From, "/") {
			return Patch{}, fault.New(fault.Invalid, "patch operation %d: %s needs a from path starting with /", i, op.Op)
		}
		if (op.Op == "add" || op.Op == "replace" || op.Op == "test") && op.Value == nil {
			return Patch{}, fault.New(fault.Invalid, "patch operation %d: %s needs a value", i, op.Op)
		}
	}
	p.Raw = raw
	return p, nil
}

// Touched returns, for every operation that changes the document, the
// paths it writes or removes (for move, also its from path). Test
// operations change nothing and are left out.
func (p Patch) Touched() []string {
	var out []string
	for _, op := range p.Ops {
		switch op.Op {
		case "test":
		case "move":
			out = append(out, op.From, op.Path)
		default:
			out = append(out, op.Path)
		}
	}
	return out
}

// Apply runs the patch's operations on doc. A patch that cannot apply (a
// failed test, a missing path) is a 422 patch_failed naming the reason.
func (p Patch) Apply(doc []byte) ([]byte, error) {
	raw, err := json.Marshal(p.Ops)
	if err != nil {
		return nil, fmt.Errorf("encode patch: %w", err)
	}
	decoded, err := jsonpatch.DecodePatch(raw)
	if err != nil {
		return nil, fault.New(fault.Invalid, "patch is not a valid JSON patch: %s", err.Error())
	}
	out, err := decoded.Apply(doc)
	if err != nil {
		return nil, fault.New(fault.PatchFailed, "patch could not be applied: %s", err.Error())
	}
	return out, nil
}

// WithoutNoOps returns p without the replace operations that change
// nothing in doc: the value at the path already equals theirs. Clients
// that send back what they read along with their change (LaunchDarkly's
// Terraform provider replaces read-only approval settings with the values
// it read) are then judged only by what they change: a read-only path is
// refused when its value would change, not when it is repeated. Raw keeps
// what was sent.
//
// doc is parsed once and each replace judged on it, which is exact while
// the operations kept before it cannot have changed its path: none writes
// the path, a parent or a child of it, and none changes the document's
// shape (add, remove, move, copy: an array index could shift). After such
// an operation every replace is kept, as sent.
func (p Patch) WithoutNoOps(doc []byte) Patch {
	var tree any
	if json.Unmarshal(doc, &tree) != nil {
		return p
	}
	kept := make([]Op, 0, len(p.Ops))
	written, within := map[string]bool{}, map[string]bool{} // paths kept replaces write; their parents
	judged := true
	for _, op := range p.Ops {
		if judged && op.Op == "replace" && !overlaps(op.Path, written, within) && holds(tree, op.Path, op.Value) {
			continue
		}
		kept = append(kept, op)
		switch op.Op {
		case "test":
		case "replace":
			written[op.Path] = true
			for _, parent := range parents(op.Path) {
				within[parent] = true
			}
		default:
			judged = false
		}
	}
	p.Ops = kept
	return p
}

// parents returns the pointers that enclose pointer, outermost first.
func parents(pointer string) []string {
	var out []string
	for i := 1; i < len(pointer); i++ {
		if pointer[i] == '/' {
			out = append(out, pointer[:i])
		}
	}
	return out
}

// overlaps reports whether pointer, or one that encloses it, was written,
// or whether a written pointer lies inside it.
func overlaps(pointer string, written, within map[string]bool) bool {
	if written[pointer] || within[pointer] {
		return true
	}
	for _, parent := range parents(pointer) {
		if written[parent] {
			return true
		}
	}
	return false
}

// holds reports whether tree has, at pointer, a value equal to value as JSON.
func holds(tree any, pointer string, value json.RawMessage) bool {
	var want any
	if json.Unmarshal(value, &want) != nil {
		return false
	}
	cur := tree
	for _, seg := range Segments(pointer) {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[seg]
			if !ok {
				return false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(c) || seg != strconv.Itoa(i) {
				return false
			}
			cur = c[i]
		default:
			return false
		}
	}
	return reflect.DeepEqual(cur, want)
}

// Actions maps every path the patch changes to its action through
// patchable (top-level field -> action), refusing a path outside it with a
// 400 that names the path and the kind of resource. Actions are sorted and
// each appears once.
func (p Patch) Actions(patchable map[string]string, kind string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, path := range p.Touched() {
		action, ok := patchable[Root(path)]
		if !ok {
			return nil, fault.New(fault.Invalid, "path %q cannot be patched: %q is read-only or not a field of %s", path, Root(path), kind)
		}
		if !seen[action] {
			seen[action] = true
			out = append(out, action)
		}
	}
	sort.Strings(out)
	return out, nil
}

// ChangingActions wraps a resource's actions for the rights check made
// before the resource is read: a replace of a path actions refuses is left
// out, since the service takes it only as a no-op (WithoutNoOps) and
// refuses it otherwise. A patch of nothing else is refused as actions does.
func ChangingActions(actions func(Patch) ([]string, error)) func(Patch) ([]string, error) {
	return func(p Patch) ([]string, error) {
		kept := make([]Op, 0, len(p.Ops))
		for _, op := range p.Ops {
			if op.Op == "replace" {
				if _, err := actions(Patch{Ops: []Op{op}}); err != nil {
					continue
				}
			}
			kept = append(kept, op)
		}
		if len(kept) == 0 {
			return actions(p)
		}
		p.Ops = kept
		return actions(p)
	}
}

// ApplyTo runs the patch on the JSON form of cur and decodes the result
// into next, naming the field of any value of the wrong type.
func (p Patch) ApplyTo(cur, next any) error {
	doc, err := json.Marshal(cur)
	if err != nil {
		return fmt.Errorf("encode document to patch: %w", err)
	}
	out, err := p.Apply(doc)
	if err != nil {
		return err
	}
	return jsondoc.Unmarshal(out, next)
}

// ChangedFields compares the top-level fields of two documents through
// their JSON form and returns, sorted, the action of each field in actions
// whose value differs.
func ChangedFields(before, after any, actions map[string]string) []string {
	var a, b map[string]json.RawMessage
	da, _ := json.Marshal(before)
	db, _ := json.Marshal(after)
	_ = json.Unmarshal(da, &a)
	_ = json.Unmarshal(db, &b)
	var out []string
	for field, action := range actions {
		var va, vb any
		_ = json.Unmarshal(a[field], &va)
		_ = json.Unmarshal(b[field], &vb)
		if !reflect.DeepEqual(va, vb) {
			out = append(out, action)
		}
	}
	sort.Strings(out)
	return out
}

// Segments splits a JSON pointer into unescaped reference tokens.
func Segments(pointer string) []string {
	parts := strings.Split(strings.TrimPrefix(pointer, "/"), "/")
	for i, s := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return parts
}

// Root returns the first segment of a JSON pointer.
func Root(pointer string) string { return Segments(pointer)[0] }
