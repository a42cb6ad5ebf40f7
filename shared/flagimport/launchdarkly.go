package flagimport

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/flagplane/flagplane/shared/flag"
)

// ldSource reads a project's flags from a LaunchDarkly-compatible REST API
// (LaunchDarkly, or another flagplane): GET /api/v2/flags/{project} with
// summary=0, which carries every environment's targets and rules, page by
// page.
type ldSource struct {
	client  *http.Client
	base    string
	apiKey  string
	project string
}

// ldPageSize is the page size asked for; LaunchDarkly allows up to 100.
const ldPageSize = 100

// ldFlag is the part of LaunchDarkly's FeatureFlag an import reads. Its
// environments decode straight into flagplane's targeting, which follows
// LaunchDarkly's field names.
type ldFlag struct {
	Key         string `json:"key"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Variations  []struct {
		Value       json.RawMessage `json:"value"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
	} `json:"variations"`
	Defaults     *flag.Defaults             `json:"defaults"`
	Tags         []string                   `json:"tags"`
	Temporary    *bool                      `json:"temporary"`
	Archived     bool                       `json:"archived"`
	Environments map[string]*flag.EnvConfig `json:"environments"`
}

type ldPage struct {
	Items      []ldFlag `json:"items"`
	TotalCount int      `json:"totalCount"`
}

func (s *ldSource) Flags(ctx context.Context) ([]SourceFlag, error) {
	headers := map[string]string{"Authorization": s.apiKey}
	var out []SourceFlag
	for offset := 0; ; {
		var page ldPage
		path := fmt.Sprintf("/api/v2/flags/%s?summary=0&limit=%d&offset=%d", url.PathEscape(s.project), ldPageSize, offset)
		if err := getJSON(ctx, s.client, s.base, path, headers, &page); err != nil {
			return nil, err
		}
		for _, f := range page.Items {
			if !f.Archived {
				out = append(out, fromLD(f))
			}
		}
		offset += len(page.Items)
		if len(out) > MaxFlagsPerRun {
			return nil, &SourceError{Status: 413, Message: fmt.Sprintf("project %q of the source holds more than %d flags, the most one configuration imports", s.project, MaxFlagsPerRun)}
		}
		if len(page.Items) == 0 || offset >= page.TotalCount {
			return out, nil
		}
	}
}

// fromLD maps a LaunchDarkly flag: variations, defaults, tags, and every
// environment's on/off, targets, rules, default rule, off variation and
// prerequisites.
func fromLD(f ldFlag) SourceFlag {
	sf := SourceFlag{Key: f.Key, Name: f.Name, Description: f.Description, Defaults: f.Defaults, Tags: f.Tags,
		Temporary: f.Temporary, Envs: map[string]*flag.EnvConfig{}}
	for _, v := range f.Variations {
		sf.Variations = append(sf.Variations, flag.VariationInput{Value: v.Value, Name: v.Name, Description: v.Description})
	}
	for k, e := range f.Environments {
		if e == nil {
			continue
		}
		// Only the targeting is the source's; versions, salt and the rest stay flagplane's own.
		sf.Envs[k] = &flag.EnvConfig{On: e.On, Targets: e.Targets, ContextTargets: e.ContextTargets, Rules: e.Rules,
			Fallthrough: e.Fallthrough, OffVariation: e.OffVariation, Prerequisites: e.Prerequisites}
	}
	return sf
}
