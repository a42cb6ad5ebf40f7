package flagimport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/flagplane/flagplane/shared/flag"
)

// SourceFlag is one flag as a source has it, in flagplane's terms.
type SourceFlag struct {
	Key         string
	Name        string
	Description string
	Variations  []flag.VariationInput
	// Defaults are the on and off variations (indexes) of environments
	// the source does not configure; nil leaves flagplane's.
	Defaults  *flag.Defaults
	Tags      []string
	Temporary *bool
	// Envs is the targeting per source environment key, prerequisites
	// aside: those name other flags, so they are set once every flag of
	// the run exists (Envs[k].Prerequisites).
	Envs map[string]*flag.EnvConfig
	// Problem, when set, is why the flag cannot be imported faithfully
	// (something of the source flagplane has no equivalent for): the run
	// leaves it out and reports it.
	Problem string
}

// Source reads every flag a configuration selects, and the segments
// those flags match in each source environment.
type Source interface {
	Flags(ctx context.Context) ([]SourceFlag, []SourceSegment, error)
}

// MaxFlagsPerRun bounds what one run reads from a source.
const MaxFlagsPerRun = 2000

// requestTimeout bounds one request to a source.
const requestTimeout = 5 * time.Second

// maxResponseBytes bounds one answer of a source.
const maxResponseBytes = 32 << 20

// SourceError is a failure to read a source: the status it answered (or
// 502 when it could not be reached or answered garbage) and what failed.
type SourceError struct {
	Status  int
	Message string
}

func (e *SourceError) Error() string { return e.Message }

// getJSON reads base+path (path already escaped) into out, sending
// headers. Errors name the path, never the credentials.
func getJSON(ctx context.Context, client *http.Client, base, path string, headers map[string]string, out any) error {
	u, err := url.Parse(base + path)
	if err != nil {
		return &SourceError{Status: http.StatusBadGateway, Message: fmt.Sprintf("the source URL %q is not valid", base+path)}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fmt.Errorf("build request to %s: %w", path, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "flagplane-flag-import")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// The error of a failed request can carry the URL, never a header.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return &SourceError{Status: http.StatusBadGateway, Message: fmt.Sprintf("the source could not be reached at %s%s: %v", base, path, err)}
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxResponseBytes+1))
	if err != nil {
		return &SourceError{Status: http.StatusBadGateway, Message: fmt.Sprintf("reading the source's answer to GET %s failed: %v", path, err)}
	}
	if len(body) > maxResponseBytes {
		return &SourceError{Status: http.StatusBadGateway, Message: fmt.Sprintf("the source's answer to GET %s is larger than %d bytes", path, maxResponseBytes)}
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		hint := ""
		switch res.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			hint = ": check the configuration's credentials and their rights"
		case http.StatusNotFound:
			hint = ": check the configuration's project and base URL"
		}
		return &SourceError{Status: res.StatusCode, Message: fmt.Sprintf("the source answered %d to GET %s%s", res.StatusCode, path, hint)}
	}
	if err := json.Unmarshal(body, out); err != nil {
		return &SourceError{Status: http.StatusBadGateway, Message: fmt.Sprintf("the source's answer to GET %s is not the JSON expected: %v", path, err)}
	}
	return nil
}

// sourceFor returns the reader of c's source system.
func (s *Service) sourceFor(c *Configuration) (Source, error) {
	switch c.IntegrationKey {
	case LaunchDarkly:
		return &ldSource{client: s.client, base: c.Config.String("baseUrl"), apiKey: c.Config.String("apiKey"),
			project: c.Config.String("sourceProjectKey")}, nil
	case Unleash:
		p := c.Config.String("unleashProject")
		if p == "" {
			p = "default"
		}
		return &unleashSource{client: s.client, base: c.Config.String("baseUrl"), token: c.Config.String("apiToken"), project: p}, nil
	}
	return nil, fmt.Errorf("no reader for %q", c.IntegrationKey)
}
