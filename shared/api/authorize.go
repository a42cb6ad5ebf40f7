package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/flagplane/flagplane/shared/catalog"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/policy"
)

// BodyActions reads the actions of an update from its body (the paths of a
// JSON patch, the kinds of semantic-patch instructions). A body that does
// not parse is the 400 the handler would give.
type BodyActions func(r *http.Request, body []byte) ([]string, error)

// Tagger loads the tags of the project and environment a resource is in,
// for callers whose statements select resources by tag.
type Tagger interface {
	Tags(ctx context.Context, projectKey, envKey string) (projectTags, envTags []string, err error)
}

// TagUser is implemented by rights that may need resource tags.
type TagUser interface{ UsesTags() bool }

// authorize decides, in the one place every operation passes, whether the
// caller may perform op's action(s) on op's resource.
func authorize(r *http.Request, op catalog.Operation, p identity.Principal, bodyActions BodyActions, tags Tagger) (*http.Request, error) {
	var body []byte
	if op.BodyActions || op.Method == http.MethodPost && strings.HasSuffix(op.Resource, "/*") {
		var err error
		if body, err = readBodyOnce(r); err != nil {
			return r, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	res, err := resourceOf(r, op, body, p, tags)
	if err != nil {
		return r, err
	}
	actions := []string{op.Action}
	switch {
	case op.BodyActions && bodyActions != nil:
		if actions, err = bodyActions(r, body); err != nil {
			return r, err
		}
	case op.Action == "":
		actions = []string{identity.ViewAction}
	}
	for _, a := range actions {
		d := p.Decide(res, a)
		if d.Allowed {
			continue
		}
		if d.Reason != nil {
			return r, fault.New(fault.Forbidden, "the access token may not %s on %s: a %s statement of role %q denies it", a, res, d.Reason.Effect, d.Reason.RoleName)
		}
		return r, fault.New(fault.Forbidden, "the access token may not %s on %s", a, res)
	}
	return r, nil
}

// readBodyOnce reads the body for the check; the handler reads the copy.
func readBodyOnce(r *http.Request) ([]byte, error) {
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
	return body, nil
}

// resourceOf fills op's resource specifier from the path; the last segment
// of a create takes the new key from the body when there is one.
func resourceOf(r *http.Request, op catalog.Operation, body []byte, p identity.Principal, tags Tagger) (policy.Resource, error) {
	parts := strings.Split(op.Resource, ":")
	var res policy.Resource
	var projectKey, envKey string
	var tagsOf []string
	for i, part := range parts {
		tagsOf = nil
		kind, name, _ := strings.Cut(part, "/")
		if strings.HasPrefix(name, "{") && strings.HasSuffix(name, "}") {
			name = r.PathValue(name[1 : len(name)-1])
		} else if name == "*" && i == len(parts)-1 && len(body) > 0 {
			// A create names its new resource, and its tags, in the body.
			var created struct {
				Key  string   `json:"key"`
				Tags []string `json:"tags"`
			}
			if json.Unmarshal(body, &created) == nil && created.Key != "" {
				name, tagsOf = created.Key, created.Tags
			}
		}
		switch kind {
		case "proj":
			projectKey = name
		case "env":
			envKey = name
		}
		if i == 0 {
			res = policy.NewResource(kind, name, tagsOf...)
		} else {
			res = res.Child(kind, name, tagsOf...)
		}
	}
	if tu, ok := p.Rights.(TagUser); ok && tu.UsesTags() && tags != nil && projectKey != "" && projectKey != "*" {
		return withTags(r.Context(), res, tags, projectKey, envKey)
	}
	return res, nil
}

// withTags rebuilds res with the stored tags of its project and environment.
func withTags(ctx context.Context, res policy.Resource, tags Tagger, projectKey, envKey string) (policy.Resource, error) {
	if envKey == "*" {
		envKey = ""
	}
	pt, et, err := tags.Tags(ctx, projectKey, envKey)
	if err != nil {
		return res, err
	}
	var out policy.Resource
	for i, seg := range res.Segments() {
		t := seg.Tags // a create's own tags, from its body
		switch seg.Kind {
		case "proj":
			t = append(t, pt...)
		case "env":
			t = append(t, et...)
		}
		if i == 0 {
			out = policy.NewResource(seg.Kind, seg.Key, t...)
		} else {
			out = out.Child(seg.Kind, seg.Key, t...)
		}
	}
	return out, nil
}
