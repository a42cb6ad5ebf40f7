package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/flagplane/flagplane/shared/catalog"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/policy"
)

// Need is one right an operation needs: Action (the catalog's action of
// the operation when empty) on On (the operation's resource when nil).
// Needs aim a right from the operation's resource (OperationResource): a
// flag change in one environment needs updateOn on
// OperationResource(r).WithKey("env", "production"), i.e. on
// proj/p:env/production:flag/f rather than proj/p:env/*:flag/f; creating
// an adaptive trigger needs the flag rights its instructions use.
type Need struct {
	Action string
	On     *policy.Resource
}

type operationResourceKey struct{}

// OperationResource is the resource the catalog names for the request's
// operation, its keys from the path (and a create's body): what Needs aim
// their rights from.
func OperationResource(r *http.Request) policy.Resource {
	res, _ := r.Context().Value(operationResourceKey{}).(policy.Resource)
	return res
}

// Needs reads the rights an operation needs from its request: the body
// (the paths of a JSON patch, the instructions of a semantic patch and the
// environment they act in) or the stored resource the path names (the
// flag and environment of an approval request). An error is the 4xx the
// handler would give: a body that does not parse, a resource not found.
type Needs func(r *http.Request, body []byte) ([]Need, error)

// Tagger fills in the stored tags of a resource's segments (project,
// environment, flag) whose keys are concrete, for callers whose statements
// select resources by tag. Tags already on a segment (a create's, from its
// body) are kept. A segment whose resource does not exist keeps no tags.
type Tagger interface {
	Tags(ctx context.Context, res policy.Resource) (policy.Resource, error)
}

// TagUser is implemented by rights that may need resource tags.
type TagUser interface{ UsesTags() bool }

// UsesTags reports whether p's statements select resources by tag, so a
// decision about p needs the resources' stored tags.
func UsesTags(p identity.Principal) bool {
	tu, ok := p.Rights.(TagUser)
	return ok && tu.UsesTags()
}

// authorize decides, in the one place every operation passes, whether the
// caller may perform op's action(s) on op's resource, or on the resources
// the request's needs name.
func authorize(r *http.Request, op catalog.Operation, p identity.Principal, needs Needs, tags Tagger) (*http.Request, error) {
	var body []byte
	if op.BodyActions || op.Method == http.MethodPost && strings.HasSuffix(op.Resource, "/*") {
		var err error
		if body, err = PeekBody(r); err != nil {
			return r, err
		}
	}
	action := op.Action
	if action == "" {
		action = identity.ViewAction
	}
	base := resourceOf(r, op, body)
	list := []Need{{Action: action}}
	if needs != nil {
		// The request that goes on carries it too: a need that peeks at the
		// body replaces the body of the request it is given.
		r = r.WithContext(context.WithValue(r.Context(), operationResourceKey{}, base))
		var err error
		if list, err = needs(r, body); err != nil {
			return r, err
		}
	}
	var memo *tagMemo
	if UsesTags(p) && tags != nil {
		memo = &tagMemo{tagger: tags, seen: map[string]policy.Resource{}}
		r = r.WithContext(context.WithValue(r.Context(), tagMemoKey{}, memo))
	}
	for _, n := range list {
		res := base
		if n.On != nil {
			res = *n.On
		}
		if memo != nil {
			var err error
			if res, err = memo.tags(r.Context(), res); err != nil {
				return r, err
			}
		}
		a := n.Action
		if a == "" {
			a = action
		}
		var d policy.Decision
		if a == identity.ViewAction {
			res, d = decideView(p, res, a)
		} else {
			d = p.Decide(res, a)
		}
		if !d.Allowed {
			return r, refusal(a, res, d)
		}
	}
	return r, nil
}

// refusal is the 403 of a refused decision, naming the action, the
// resource it was decided on and the statement that decided.
func refusal(action string, res policy.Resource, d policy.Decision) error {
	if d.Reason != nil {
		return fault.New(fault.Forbidden, "the access token may not %s on %s: a %s statement of role %q denies it", action, res, d.Reason.Effect, d.Reason.RoleName)
	}
	return fault.New(fault.Forbidden, "the access token may not %s on %s", action, res)
}

// decideView decides a read of res along the resources that enclose it
// (its project, its environment, then res): a deny statement on any of
// them refuses, so a role denying proj/pb or proj/*:env/denied hides
// everything inside; otherwise a read allowed on any of them is allowed,
// as viewProject on a project reads what the project holds. The resource
// returned is the one the decision was made on, for the refusal to name.
func decideView(p identity.Principal, res policy.Resource, action string) (policy.Resource, policy.Decision) {
	var allowed *policy.Decision
	for _, in := range res.Enclosing() {
		d := p.Decide(in, action)
		if !d.Allowed && d.Reason != nil {
			return in, d
		}
		if d.Allowed && allowed == nil {
			allowed = &d
		}
	}
	if allowed != nil {
		return res, *allowed
	}
	return res, p.Decide(res, action)
}

// MayView answers whether the caller of r may read the item res names
// with action (the action of the GET of that item, viewProject for
// everything inside a project), with the decision that GET makes: the
// same chain of enclosing resources, with their stored tags for
// tag-selecting roles. Lists keep only the items it allows, so a list
// never shows what a GET of the item would refuse.
func MayView(r *http.Request, res policy.Resource, action string) bool {
	return RequireView(r, res, action) == nil
}

// RequireView is MayView as the 403 the router would give, for reads
// whose scope a query parameter names rather than the path.
func RequireView(r *http.Request, res policy.Resource, action string) error {
	p, _ := identity.From(r.Context())
	in, d := decideView(p, StoredTags(r, res), action)
	if d.Allowed {
		return nil
	}
	return refusal(action, in, d)
}

// tagMemo loads each resource's stored tags once per request, for the
// check and for the `_access` objects of the answer.
type tagMemo struct {
	tagger Tagger
	mu     sync.Mutex
	seen   map[string]policy.Resource
}

type tagMemoKey struct{}

func (m *tagMemo) tags(ctx context.Context, res policy.Resource) (policy.Resource, error) {
	id := res.String()
	m.mu.Lock()
	t, ok := m.seen[id]
	m.mu.Unlock()
	if ok {
		return t, nil
	}
	t, err := m.tagger.Tags(ctx, res)
	if err != nil {
		return res, err
	}
	m.mu.Lock()
	m.seen[id] = t
	m.mu.Unlock()
	return t, nil
}

// StoredTags returns res with the stored tags of its segments when the
// caller's statements select by tag (the only callers whose decisions
// depend on them), and res as it is otherwise. Loads are shared with the
// request's authorization check. A failed load leaves res untagged: the
// check fails on such an error, while `_access` is only informative.
func StoredTags(r *http.Request, res policy.Resource) policy.Resource {
	memo, ok := r.Context().Value(tagMemoKey{}).(*tagMemo)
	if !ok {
		return res
	}
	t, err := memo.tags(r.Context(), res)
	if err != nil {
		return res
	}
	return t
}

// PeekBody reads the body (bounded by MaxBody) and puts an unread copy
// back for the handler: for rights checks that depend on the body.
func PeekBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if err != nil {
		return nil, fault.Wrap(err, fault.Invalid, "request body could not be read")
	}
	if len(body) > MaxBody {
		return nil, fault.New(fault.TooLarge, "request body is larger than %d bytes", MaxBody)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, nil
}

// pathParam matches a {param} of a catalog resource.
var pathParam = regexp.MustCompile(`\{[^}]*\}`)

// resourceOf fills op's resource specifier from the path; the last segment
// of a create takes the new key, and its tags, from the body when there is one.
func resourceOf(r *http.Request, op catalog.Operation, body []byte) policy.Resource {
	parts := strings.Split(op.Resource, ":")
	var res policy.Resource
	for i, part := range parts {
		var tagsOf []string
		kind, name, _ := strings.Cut(part, "/")
		if strings.Contains(name, "{") {
			// Every {param} of the name: an integration's is two, <integrationKey>/<id>
			// (or <integrationKey>/* for its creates and lists).
			name = pathParam.ReplaceAllStringFunc(name, func(p string) string { return r.PathValue(p[1 : len(p)-1]) })
		} else if name == "*" && i == len(parts)-1 && len(body) > 0 {
			var created struct {
				Key  string   `json:"key"`
				Tags []string `json:"tags"`
			}
			if json.Unmarshal(body, &created) == nil && created.Key != "" {
				name, tagsOf = created.Key, created.Tags
			}
		}
		if i == 0 {
			res = policy.NewResource(kind, name, tagsOf...)
		} else {
			res = res.Child(kind, name, tagsOf...)
		}
	}
	return res
}
