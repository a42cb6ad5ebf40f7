package segmentapi

import (
	"context"
	"net/http"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/listing"
	"github.com/flagplane/flagplane/shared/patch"
	"github.com/flagplane/flagplane/shared/segment"
	"github.com/flagplane/flagplane/shared/semanticpatch"
)

// maxSegmentPage is the largest page of segments: a list-based segment
// carries up to segment.MaxTargets keys.
const maxSegmentPage = 50

// maxPageKeyBytes bounds the listed keys a page carries: a page stops
// early (its links then step by the shorter page) rather than grow past
// what Lambda may answer (6 MB) when its segments list many keys.
const maxPageKeyBytes = 4 << 20

// fitPage returns how many of page's segments fit maxPageKeyBytes of
// listed keys, at least one.
func fitPage(page []*segment.Segment) int {
	total := 0
	for i, s := range page {
		total += s.KeyBytes()
		if i > 0 && total > maxPageKeyBytes {
			return i
		}
	}
	return len(page)
}

func (h handlers) getSegments(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	offset, limit, err := api.OffsetParams(q, 20, maxSegmentPage)
	if err != nil {
		return err
	}
	pk, ek := r.PathValue("projectKey"), r.PathValue("environmentKey")
	all, err := h.segments.List(r.Context(), pk, ek, segment.ListQuery{Filter: q.Get("filter"), Sort: q.Get("sort")})
	if err != nil {
		return err
	}
	page := listing.Window(all, offset, limit)
	if n := fitPage(page); n < len(page) {
		page, limit = page[:n], int64(n)
	}
	out := segmentsRep{Links: api.OffsetLinks(segment.CollectionHref(pk, ek), q, offset, limit, int64(len(all))),
		TotalCount: len(all), Items: []segmentRep{}}
	envID := h.envIDs(r.Context(), pk, ek)
	for _, s := range page {
		id, err := envID(s)
		if err != nil {
			return err
		}
		rep, err := h.newSegmentRep(r, s, id)
		if err != nil {
			return err
		}
		out.Items = append(out.Items, rep)
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h handlers) postSegment(w http.ResponseWriter, r *http.Request) error {
	var in segment.Input
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	s, err := h.segments.Create(r.Context(), r.PathValue("projectKey"), r.PathValue("environmentKey"), in)
	if err != nil {
		return err
	}
	return h.write(w, r, http.StatusCreated, s)
}

func (h handlers) getSegment(w http.ResponseWriter, r *http.Request) error {
	pk, ek, key := r.PathValue("projectKey"), r.PathValue("environmentKey"), r.PathValue("segmentKey")
	s, err := h.segments.Get(r.Context(), pk, ek, key)
	if err != nil {
		return h.missing(r.Context(), pk, ek, err)
	}
	id, err := h.envIDs(r.Context(), pk, ek)(s)
	if err != nil {
		return err
	}
	rep, err := h.newSegmentRep(r, s, id)
	if err != nil {
		return err
	}
	flags, _, err := h.segments.Users(r.Context(), pk, ek, key)
	if err != nil {
		return err
	}
	withFlags(&rep, s, flags)
	api.WriteJSON(w, http.StatusOK, rep)
	return nil
}

// patchSegment takes a JSON patch (RFC 6902, `test` operations included)
// or, under a semantic-patch Content-Type, a semantic patch.
func (h handlers) patchSegment(w http.ResponseWriter, r *http.Request) error {
	// A dry run that went ahead would write; refuse it until previews exist.
	if dry, err := api.BoolParam(r.URL.Query(), "dryRun", false); err != nil || dry {
		return fault.New(fault.Invalid, "query parameter \"dryRun\" is not supported: the patch would be applied, not previewed")
	}
	body, err := api.ReadBody(w, r)
	if err != nil {
		return err
	}
	pk, ek, key := r.PathValue("projectKey"), r.PathValue("environmentKey"), r.PathValue("segmentKey")
	var s *segment.Segment
	if api.IsSemanticPatch(r) {
		sp, err := parseSemanticPatch(r, body)
		if err != nil {
			return err
		}
		s, err = h.segments.SemanticPatch(r.Context(), pk, ek, key, sp)
		if err != nil {
			return h.missing(r.Context(), pk, ek, err)
		}
	} else {
		p, err := parseJSONPatch(body)
		if err != nil {
			return err
		}
		if s, err = h.segments.Patch(r.Context(), pk, ek, key, p); err != nil {
			return h.missing(r.Context(), pk, ek, err)
		}
	}
	return h.write(w, r, http.StatusOK, s)
}

func (h handlers) deleteSegment(w http.ResponseWriter, r *http.Request) error {
	pk, ek := r.PathValue("projectKey"), r.PathValue("environmentKey")
	if err := h.segments.Delete(r.Context(), pk, ek, r.PathValue("segmentKey")); err != nil {
		return h.missing(r.Context(), pk, ek, err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// write answers s with status.
func (h handlers) write(w http.ResponseWriter, r *http.Request, status int, s *segment.Segment) error {
	id, err := h.envIDs(r.Context(), s.ProjectKey, s.EnvironmentKey)(s)
	if err != nil {
		return err
	}
	rep, err := h.newSegmentRep(r, s, id)
	if err != nil {
		return err
	}
	api.WriteJSON(w, status, rep)
	return nil
}

// missing turns a segment's 404 into its environment's when the
// environment (or its project) is what does not exist, so the answer
// names what is missing.
func (h handlers) missing(ctx context.Context, projectKey, envKey string, err error) error {
	if !fault.Is(err, fault.NotFound) {
		return err
	}
	if _, envErr := h.envs.Get(ctx, projectKey, envKey); envErr != nil {
		return envErr
	}
	return err
}

// envIDs returns the environment's _id for the metadata of big
// segments, reading the environment once, at the first big segment.
func (h handlers) envIDs(ctx context.Context, projectKey, envKey string) func(*segment.Segment) (string, error) {
	var id string
	return func(s *segment.Segment) (string, error) {
		if !s.Unbounded || id != "" {
			return id, nil
		}
		e, err := h.envs.Get(ctx, projectKey, envKey)
		if err != nil {
			return "", err
		}
		id = e.ID
		return id, nil
	}
}

// parseSemanticPatch reads a semantic patch whose environmentKey, when
// given, is the environment of the path.
func parseSemanticPatch(r *http.Request, body []byte) (semanticpatch.Patch, error) {
	sp, err := semanticpatch.Parse(body)
	if err != nil {
		return sp, err
	}
	if ek := r.PathValue("environmentKey"); sp.EnvironmentKey != "" && sp.EnvironmentKey != ek {
		return sp, fault.New(fault.Invalid, "field \"environmentKey\" is %q, but the segment is in environment %q", sp.EnvironmentKey, ek)
	}
	return sp, nil
}

// parseJSONPatch parses a JSON patch, telling a client that sent
// semantic-patch instructions without the Content-Type parameter what to add.
func parseJSONPatch(body []byte) (patch.Patch, error) {
	if semanticpatch.HasInstructions(body) {
		return patch.Patch{}, fault.New(fault.Invalid, "the body holds semantic patch instructions, but Content-Type does not announce a semantic patch: send it as %q", "application/json; domain-model="+api.SemanticPatchModel)
	}
	return patch.Parse(body)
}

// patchNeeds are the actions of the patch (each path's, each
// instruction's) on the segment: the operation's resource, which carries
// the segment's stored tags for roles that select by tag.
func patchNeeds(r *http.Request, body []byte) ([]api.Need, error) {
	var actions []string
	if api.IsSemanticPatch(r) {
		sp, err := parseSemanticPatch(r, body)
		if err != nil {
			return nil, err
		}
		if actions, err = segment.InstructionActions(sp.Instructions); err != nil {
			return nil, err
		}
	} else {
		p, err := parseJSONPatch(body)
		if err != nil {
			return nil, err
		}
		if actions, err = segment.PatchActions(p); err != nil {
			return nil, err
		}
	}
	if len(actions) == 0 {
		return []api.Need{{}}, nil // a patch of tests only: the catalog's action
	}
	return api.ActionNeeds(actions...), nil
}
