package segmentapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"

	"github.com/launchdarkly/go-sdk-common/v3/ldcontext"
	"github.com/launchdarkly/go-sdk-common/v3/ldvalue"
	"github.com/launchdarkly/go-server-sdk-evaluation/v3/ldmodel"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/evaluation"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/segment"
)

// bigSegmentTargetRep is the reference's BigSegmentTarget.
type bigSegmentTargetRep struct {
	UserKey  string `json:"userKey"`
	Included bool   `json:"included"`
	Excluded bool   `json:"excluded"`
}

// importRep is the reference's Import.
type importRep struct {
	Links        api.Links      `json:"_links"`
	ID           string         `json:"id"`
	SegmentKey   string         `json:"segmentKey"`
	CreationTime int64          `json:"creationTime"`
	Mode         string         `json:"mode"`
	Status       string         `json:"status"`
	Files        []segment.File `json:"files"`
}

// exportRep is the reference's Export; _links.exportDownload is the CSV
// file, served by getBigSegmentExport itself to a request accepting text/csv.
type exportRep struct {
	Links        api.Links         `json:"_links"`
	ID           string            `json:"id"`
	SegmentKey   string            `json:"segmentKey"`
	CreationTime int64             `json:"creationTime"`
	Status       string            `json:"status"`
	SizeBytes    int64             `json:"sizeBytes"`
	Size         string            `json:"size"`
	Initiator    segment.Initiator `json:"initiator"`
}

// membershipRep is the reference's ContextInstanceSegmentMembership.
type membershipRep struct {
	Links                  api.Links `json:"_links"`
	Name                   string    `json:"name"`
	Key                    string    `json:"key"`
	Description            string    `json:"description"`
	Unbounded              bool      `json:"unbounded"`
	External               string    `json:"external"`
	IsMember               bool      `json:"isMember"`
	IsIndividuallyTargeted bool      `json:"isIndividuallyTargeted"`
	IsRuleTargeted         bool      `json:"isRuleTargeted"`
}

type membershipsRep struct {
	Links api.Links       `json:"_links"`
	Items []membershipRep `json:"items"`
}

// csvType is the exported file's media type.
const csvType = "text/csv"

// maxImport bounds an uploaded import: a million keys of 64 bytes fit
// with room to spare; the file is streamed, never held whole.
const maxImport = 512 << 20

func path(r *http.Request) (projectKey, envKey, segmentKey string) {
	return r.PathValue("projectKey"), r.PathValue("environmentKey"), r.PathValue("segmentKey")
}

func (h handlers) updateBigSegmentTargets(w http.ResponseWriter, r *http.Request) error {
	return h.updateTargets(w, r, segment.UserKind)
}

func (h handlers) updateBigSegmentContextTargets(w http.ResponseWriter, r *http.Request) error {
	return h.updateTargets(w, r, "")
}

// updateTargets changes the lists of a big segment of contexts of kind
// (the user form) or of its own kind.
func (h handlers) updateTargets(w http.ResponseWriter, r *http.Request, kind string) error {
	var in segment.TargetChanges
	if err := api.Decode(w, r, &in); err != nil {
		return err
	}
	pk, ek, key := path(r)
	if err := h.segments.UpdateTargets(r.Context(), pk, ek, key, kind, in); err != nil {
		return h.missing(r.Context(), pk, ek, err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// targetsNeeds are updateIncluded and updateExcluded on the segment, as
// the body changes its lists.
func targetsNeeds(r *http.Request, _ []byte) ([]api.Need, error) {
	body, err := api.PeekBody(r)
	if err != nil {
		return nil, err
	}
	var in segment.TargetChanges
	if json.Unmarshal(body, &in) != nil {
		return []api.Need{{}}, nil // the handler names what is wrong
	}
	var out []api.Need
	for _, a := range in.Actions() {
		out = append(out, api.Need{Action: a})
	}
	if len(out) == 0 {
		return []api.Need{{}}, nil
	}
	return out, nil
}

func (h handlers) getSegmentMembershipForUser(w http.ResponseWriter, r *http.Request) error {
	return h.membership(w, r, segment.UserKind, r.PathValue("userKey"))
}

func (h handlers) getSegmentMembershipForContext(w http.ResponseWriter, r *http.Request) error {
	return h.membership(w, r, "", r.PathValue("contextKey"))
}

// membership answers whether a key is on a big segment's lists; a key on
// neither is an answer too (both false), as the reference shows it.
func (h handlers) membership(w http.ResponseWriter, r *http.Request, kind, contextKey string) error {
	pk, ek, key := path(r)
	seg, err := h.segments.Big(r.Context(), pk, ek, key, kind)
	if err != nil {
		return h.missing(r.Context(), pk, ek, err)
	}
	included, excluded, err := h.segments.Membership(r.Context(), pk, ek, key, seg.Generation, contextKey)
	if err != nil {
		return err
	}
	api.WriteJSON(w, http.StatusOK, bigSegmentTargetRep{UserKey: contextKey, Included: included, Excluded: excluded})
	return nil
}

// createBigSegmentImport streams the multipart body's CSV file into the
// import's staged chunks; the worker applies them. The import's path is
// in Location, as the reference's processBigSegmentImport expects.
func (h handlers) createBigSegmentImport(w http.ResponseWriter, r *http.Request) error {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		return fault.New(fault.UnsupportedMedia, "the body must be multipart/form-data with a CSV file in field \"file\" and the mode (merge or replace) in field \"mode\"")
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxImport)
	mr, err := r.MultipartReader()
	if err != nil {
		return fault.Wrap(err, fault.Invalid, "the multipart body cannot be read: %v", err)
	}
	pk, ek, key := path(r)
	up, err := h.segments.BeginImport(r.Context(), pk, ek, key)
	if err != nil {
		return h.missing(r.Context(), pk, ek, err)
	}
	job, err := readImport(r.Context(), up, mr)
	if err != nil {
		up.Abort(r.Context())
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return fault.New(fault.TooLarge, "the import is larger than %d bytes", maxImport)
		}
		return err
	}
	w.Header().Set("Location", job.Href())
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// readImport reads the parts of an import, in any order.
func readImport(ctx context.Context, up *segment.Upload, mr *multipart.Reader) (*segment.Job, error) {
	mode := ""
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fault.Wrap(err, fault.Invalid, "the multipart body cannot be read: %v", err)
		}
		switch part.FormName() {
		case "file":
			name := part.FileName()
			if name == "" {
				name = "import.csv"
			}
			if err := up.ReadCSV(ctx, name, part); err != nil {
				return nil, err
			}
		case "mode":
			v, err := io.ReadAll(io.LimitReader(part, 64))
			if err != nil {
				return nil, fault.Wrap(err, fault.Invalid, "field \"mode\" cannot be read")
			}
			mode = strings.TrimSpace(string(v))
		}
		part.Close()
	}
	return up.Finish(ctx, mode)
}

func (h handlers) getBigSegmentImport(w http.ResponseWriter, r *http.Request) error {
	pk, ek, key := path(r)
	j, err := h.segments.Job(r.Context(), pk, ek, key, segment.JobImport, r.PathValue("importID"))
	if err != nil {
		return h.missing(r.Context(), pk, ek, err)
	}
	files := j.Files
	if files == nil {
		files = []segment.File{}
	}
	api.WriteJSON(w, http.StatusOK, importRep{Links: api.Self(j.Href()), ID: j.ID, SegmentKey: j.SegmentKey,
		CreationTime: j.CreationTime, Mode: j.Mode, Status: j.Status, Files: files})
	return nil
}

// createBigSegmentExport records the export for the worker; its path is
// in Location, the reference's answer having no body.
func (h handlers) createBigSegmentExport(w http.ResponseWriter, r *http.Request) error {
	pk, ek, key := path(r)
	j, err := h.segments.StartExport(r.Context(), pk, ek, key)
	if err != nil {
		return h.missing(r.Context(), pk, ek, err)
	}
	w.Header().Set("Location", j.Href())
	w.WriteHeader(http.StatusOK)
	return nil
}

func (h handlers) getBigSegmentExport(w http.ResponseWriter, r *http.Request) error {
	pk, ek, key := path(r)
	j, err := h.segments.Job(r.Context(), pk, ek, key, segment.JobExport, r.PathValue("exportID"))
	if err != nil {
		return h.missing(r.Context(), pk, ek, err)
	}
	if accepts(r, csvType) {
		if j.Status != segment.StatusComplete {
			return fault.New(fault.Conflict, "export %s is %s: its file is ready when it is complete", j.ID, j.Status)
		}
		w.Header().Set("Content-Type", csvType)
		w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", j.SegmentKey+"-"+j.ID+".csv"))
		w.WriteHeader(http.StatusOK)
		// Past the header an error can only cut the file short.
		_ = h.segments.ExportFile(r.Context(), j, w)
		return nil
	}
	links := api.Self(j.Href())
	if j.Status == segment.StatusComplete {
		links["exportDownload"] = api.Link{Href: j.Href(), Type: csvType}
	}
	api.WriteJSON(w, http.StatusOK, exportRep{Links: links, ID: j.ID, SegmentKey: j.SegmentKey, CreationTime: j.CreationTime,
		Status: j.Status, SizeBytes: j.SizeBytes, Size: size(j.SizeBytes), Initiator: j.Initiator})
	return nil
}

// accepts reports whether the request asks for media type t.
func accepts(r *http.Request, t string) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == t {
			return true
		}
	}
	return false
}

// size is a byte count with units, as the reference's "18 B".
func size(n int64) string {
	units := []string{"B", "KB", "MB", "GB"}
	f, i := float64(n), 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f %s", f, units[i])
}

// membershipFlag is the flag the evaluator is given to ask whether a
// context matches one segment: one rule matching the segment.
func membershipFlag(key string) *ldmodel.FeatureFlag {
	f := &ldmodel.FeatureFlag{Key: "$segment-membership", On: true, Version: 1,
		Variations:  []ldvalue.Value{ldvalue.Bool(false), ldvalue.Bool(true)},
		Fallthrough: ldmodel.VariationOrRollout{Variation: ldvalue.NewOptionalInt(0)},
		Rules: []ldmodel.FlagRule{{ID: "member", VariationOrRollout: ldmodel.VariationOrRollout{Variation: ldvalue.NewOptionalInt(1)},
			Clauses: []ldmodel.Clause{{Op: ldmodel.OperatorSegmentMatch, Values: []ldvalue.Value{ldvalue.String(key)}}}}},
	}
	ldmodel.PreprocessFlag(f)
	return f
}

// getContextInstanceSegmentsMembershipByEnv evaluates every segment of
// the environment for the context with LaunchDarkly's evaluator (big
// segments from their members): isMember as a segmentMatch clause would
// match, isIndividuallyTargeted when the context's key is included,
// isRuleTargeted when the segment's rules alone match it.
func (h handlers) getContextInstanceSegmentsMembershipByEnv(w http.ResponseWriter, r *http.Request) error {
	body, err := api.ReadBody(w, r)
	if err != nil {
		return err
	}
	c, err := evaluation.ParseContext(body)
	if err != nil {
		return err
	}
	pk, ek := r.PathValue("projectKey"), r.PathValue("environmentKey")
	if _, err := h.envs.Get(r.Context(), pk, ek); err != nil {
		return err
	}
	segs, err := h.segments.All(r.Context(), pk, ek)
	if err != nil {
		return err
	}
	models := evaluation.SegmentsOf(evaluation.NewSegmentModels(), segs)
	noFlags := func(string) *ldmodel.FeatureFlag { return nil }
	eval := evaluation.NewEvaluator(r.Context(), noFlags, models, h.segments, pk, ek)
	out := membershipsRep{Links: api.Self(segment.CollectionHref(pk, ek)), Items: []membershipRep{}}
	for _, s := range segs {
		m, ok := models[s.Key]
		if !ok {
			continue // never sent to SDKs: no segmentMatch matches it
		}
		member := eval.Evaluate(membershipFlag(s.Key), c, nil).Detail.Value.BoolValue()
		individually, err := h.individually(r.Context(), s, c)
		if err != nil {
			return err
		}
		// The rules alone: the segment without its lists, evaluated the same way.
		rulesOnly := *m
		rulesOnly.Included, rulesOnly.Excluded, rulesOnly.IncludedContexts, rulesOnly.ExcludedContexts = nil, nil, nil, nil
		rulesOnly.Unbounded = false
		ldmodel.PreprocessSegment(&rulesOnly)
		alone := evaluation.Segments{}
		for k, v := range models {
			alone[k] = v
		}
		alone[s.Key] = &rulesOnly
		byRules := evaluation.NewEvaluator(r.Context(), noFlags, alone, h.segments, pk, ek).Evaluate(membershipFlag(s.Key), c, nil).Detail.Value.BoolValue()
		rep := membershipRep{Links: api.Self(segment.Href(pk, ek, s.Key)), Name: s.Name, Key: s.Key, Description: s.Description,
			Unbounded: s.Unbounded, IsMember: member, IsIndividuallyTargeted: individually, IsRuleTargeted: byRules}
		out.Items = append(out.Items, rep)
	}
	api.WriteJSON(w, http.StatusOK, out)
	return nil
}

// individually reports whether the context's key of the segment's kind is
// on its included list (a big segment's members, else its targets).
func (h handlers) individually(ctx context.Context, s *segment.Segment, c ldcontext.Context) (bool, error) {
	if s.Unbounded {
		ic := c.IndividualContextByKind(ldcontext.Kind(s.UnboundedContextKind))
		if !ic.IsDefined() {
			return false, nil
		}
		included, _, err := h.segments.Membership(ctx, s.ProjectKey, s.EnvironmentKey, s.Key, s.Generation, ic.Key())
		return included, err
	}
	if ic := c.IndividualContextByKind(ldcontext.DefaultKind); ic.IsDefined() {
		for _, k := range s.Included {
			if k == ic.Key() {
				return true, nil
			}
		}
	}
	for _, t := range s.IncludedContexts {
		ic := c.IndividualContextByKind(ldcontext.Kind(t.ContextKind))
		if !ic.IsDefined() {
			continue
		}
		for _, k := range t.Values {
			if k == ic.Key() {
				return true, nil
			}
		}
	}
	return false, nil
}
