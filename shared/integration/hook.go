package integration

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/webhook"
)

// ConsumerName is the outbox consumer of the event hooks.
const ConsumerName = "integrations"

// deliveredTTL is how long a delivery marker is kept: longer than any
// message can be retried.
const deliveredTTL = 7 * 24 * time.Hour

// maxAnswer bounds what is read of a receiver's answer.
const maxAnswer = 64 << 10

// post sends one request and returns the answer's start. Errors name the
// host only: a URL (Slack's, Teams') holds a secret, and the HTTP client's
// own errors quote the whole URL.
func (s *Service) post(ctx context.Context, u *url.URL, body []byte, h http.Header) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, webhook.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build request to %s", u.Host)
	}
	req.Header = h
	resp, err := s.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("send to %s: %v", u.Host, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return answer, fmt.Errorf("send to %s: status %d", u.Host, resp.StatusCode)
	}
	return answer, nil
}

// verify runs a two-step setup's check: a signed challenge the endpoint
// must echo in its answer's "challenge" field.
func (s *Service) verify(ctx context.Context, m *Manifest, c *Config) error {
	values := m.Defaults(c.ConfigValues)
	u, err := renderers[m.Key].endpoint(values)
	if err != nil {
		return err
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	body, h, err := verificationRequest(token, values)
	if err != nil {
		return err
	}
	answer, err := s.post(ctx, u, body, h)
	if err != nil {
		s.logger.Info("integration setup not verified", "integration", m.Key, "configuration", c.ID, "error", err.Error())
		return err
	}
	var got challenge
	if json.Unmarshal(answer, &got) != nil || got.Challenge != token {
		return fmt.Errorf("verify %s: the answer does not echo the challenge", u.Host)
	}
	return nil
}

// Consumer is the outbox consumer that runs the event hooks.
func (s *Service) Consumer() webhook.Consumer {
	return webhook.Consumer{Name: ConsumerName, Handle: s.Deliver}
}

// Deliver sends an audit entry to every enabled, finalized configuration
// with the events hook whose statements select it. It is idempotent per
// (entry, configuration): a delivery made is marked, so a retry after one
// configuration failed sends only to those not yet served. The error joins
// the failures, so the queue retries them (and dead-letters them at last).
func (s *Service) Deliver(ctx context.Context, e audit.Entry, attempt int) error {
	var failures []error
	var payload []byte
	var done map[string]bool // the configurations served, read once a configuration matches
	configs, err := s.all(ctx)
	if err != nil {
		return err
	}
	for _, c := range configs {
		key := c.IntegrationKey
		m, ok := manifests[key]
		if !ok || !m.Offers(CapabilityEventsHook) || !c.Enabled || c.Pending || !webhook.Matches(&webhook.Webhook{On: true, Statements: c.statements()}, e) {
			continue
		}
		if done == nil {
			if done, err = s.delivered(ctx, e.ID); err != nil {
				return err
			}
		}
		if done[c.ID] {
			continue // sent by an earlier attempt
		}
		mark := store.IntegrationDeliveredKey(e.ID, c.ID)
		if payload == nil {
			if payload, err = s.render(e); err != nil {
				return fmt.Errorf("render entry %s: %w", e.ID, err)
			}
		}
		if err := s.send(ctx, m, c, event{Entry: e, JSON: payload, DeliveryID: e.ID + "." + c.ID}); err != nil {
			s.logger.Warn("integration event hook failed", "integration", key, "configuration", c.ID, "entry", e.ID, "attempt", attempt, "error", err.Error())
			failures = append(failures, fmt.Errorf("%s configuration %s: %w", key, c.ID, err))
			continue
		}
		it := store.Item{PK: mark.PK, SK: mark.SK, Version: 1, TTL: s.now().Add(deliveredTTL).Unix(), Data: []byte(`{}`)}
		if err := s.table.Put(ctx, it, store.Cond{}); err != nil {
			// Sent but not marked: a retry may send it again, which receivers can spot by the delivery id.
			failures = append(failures, fmt.Errorf("mark delivery to %s configuration %s: %w", key, c.ID, err))
		}
	}
	return errors.Join(failures...)
}

// delivered returns the ids of the configurations entry entryID was
// already sent to: its delivery markers, one partition, one Query.
func (s *Service) delivered(ctx context.Context, entryID string) (map[string]bool, error) {
	k := store.IntegrationDeliveredKey(entryID, "") // the partition, and the markers' sort key prefix
	out := map[string]bool{}
	err := record.Each(ctx, s.table, store.Query{PK: k.PK, SKPrefix: k.SK}, "event hook delivery markers", func(it store.Item) error {
		out[strings.TrimPrefix(it.SK, k.SK)] = true
		return nil
	})
	return out, err
}

func (s *Service) send(ctx context.Context, m *Manifest, c *Config, ev event) error {
	r := renderers[m.Key]
	values := m.Defaults(c.ConfigValues)
	u, err := r.endpoint(values)
	if err != nil {
		return err
	}
	body, h, err := r.request(ev, values)
	if err != nil {
		return fmt.Errorf("render for %s: %w", m.Key, err)
	}
	_, err = s.post(ctx, u, body, h)
	return err
}
