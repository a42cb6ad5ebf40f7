package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/store"
)

// Headers of every delivery.
const (
	SignatureHeader = "X-SVC-Signature"
	DeliveryHeader  = "X-SVC-Delivery"
)

// Timeout bounds one delivery.
const Timeout = 10 * time.Second

// Message is one unit of queued work: the fan-out of an audit entry to the
// webhooks it matches (HookID empty), or one delivery to one webhook. A
// delivery's id stays the same across retries and repeated fan-outs, so
// receivers can drop duplicates.
type Message struct {
	EntryID    string `json:"entryId"`
	HookID     string `json:"hookId,omitempty"`
	DeliveryID string `json:"deliveryId,omitempty"`
	// Consumer names the Consumer to hand the entry to (HookID empty).
	Consumer string `json:"consumer,omitempty"`
}

// A Consumer is another reader of the outbox than webhooks (feature
// stores kept filled, integrations' event hooks): the fan-out queues one
// message per consumer and entry, so each gets the queue's retries and
// dead letters on its own. Handle must be idempotent: a message can come
// twice. An error asks for a later retry.
type Consumer struct {
	Name   string
	Handle func(ctx context.Context, e audit.Entry, attempt int) error
	// Wants, optional, says from the entry alone whether Handle has
	// anything to do with it; when it says no, the fan-out queues no
	// message (nor the entry's read, nor the consumer's store reads).
	Wants func(e audit.Entry) bool
}

// Queue hands messages to the delivery worker.
type Queue interface {
	Send(ctx context.Context, m Message) error
}

// Publisher hands committed changes to the queue: the outbox hand-off.
type Publisher struct{ Queue Queue }

// Publish queues the fan-out of the entry.
func (p Publisher) Publish(ctx context.Context, rec audit.Outbox) error {
	return p.Queue.Send(ctx, Message{EntryID: rec.EntryID})
}

// Attempt is one recorded delivery attempt.
type Attempt struct {
	Time       int64  `json:"time"`
	DeliveryID string `json:"deliveryId"`
	EntryID    string `json:"entryId"`
	Attempt    int    `json:"attempt"`
	Status     int    `json:"status"`
	Error      string `json:"error,omitempty"`
}

// attemptTTL is how long attempts are kept.
const attemptTTL = 7 * 24 * time.Hour

// Dispatcher runs queued messages: it fans entries out and delivers.
type Dispatcher struct {
	table  store.Table
	hooks  *Service
	log    *audit.Log
	queue  Queue
	render func(audit.Entry) ([]byte, error)
	client *http.Client
	now    func() time.Time

	consumers map[string]Consumer
}

// AddConsumer hands every entry fanned out from now on to c as well.
func (d *Dispatcher) AddConsumer(c Consumer) {
	if d.consumers == nil {
		d.consumers = map[string]Consumer{}
	}
	d.consumers[c.Name] = c
}

// NewDispatcher returns a dispatcher sending follow-up messages to queue;
// render turns an entry into the payload (the API's audit entry JSON).
func NewDispatcher(table store.Table, hooks *Service, log *audit.Log, queue Queue, guard Guard, render func(audit.Entry) ([]byte, error), now func() time.Time) *Dispatcher {
	return &Dispatcher{
		table: table, hooks: hooks, log: log, queue: queue, render: render, now: now,
		client: guard.Client(Timeout),
	}
}

// Handle runs one message; attempt counts from 1. An error asks the queue
// to try again later (or dead-letter it when attempts are used up).
func (d *Dispatcher) Handle(ctx context.Context, m Message, attempt int) error {
	switch {
	case m.Consumer != "":
		return d.consume(ctx, m, attempt)
	case m.HookID == "":
		if err := d.fanOut(ctx, m.EntryID); err != nil {
			return err
		}
		d.log.FannedOut(ctx, m.EntryID)
		return nil
	}
	return d.deliver(ctx, m, attempt)
}

func (d *Dispatcher) consume(ctx context.Context, m Message, attempt int) error {
	c, ok := d.consumers[m.Consumer]
	if !ok {
		return nil // a consumer this process does not link: nothing it could do
	}
	e, err := d.log.Get(ctx, m.EntryID)
	if fault.Is(err, fault.NotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := c.Handle(ctx, e, attempt); err != nil {
		return fmt.Errorf("consumer %s of entry %s: %w", c.Name, e.ID, err)
	}
	return nil
}

func (d *Dispatcher) fanOut(ctx context.Context, entryID string) error {
	e, err := d.log.Get(ctx, entryID)
	if fault.Is(err, fault.NotFound) {
		return nil // nothing to deliver; retrying cannot help
	}
	if err != nil {
		return err
	}
	hooks, err := d.hooks.all(ctx)
	if err != nil {
		return err
	}
	for name, c := range d.consumers {
		if c.Wants != nil && !c.Wants(e) {
			continue
		}
		if err := d.queue.Send(ctx, Message{EntryID: e.ID, Consumer: name, DeliveryID: e.ID + "." + name}); err != nil {
			return fmt.Errorf("queue entry %s for consumer %s: %w", e.ID, name, err)
		}
	}
	for _, h := range hooks {
		if !Matches(h, e) {
			continue
		}
		if err := d.queue.Send(ctx, Message{EntryID: e.ID, HookID: h.ID, DeliveryID: e.ID + "." + h.ID}); err != nil {
			return fmt.Errorf("queue delivery of %s to webhook %s: %w", e.ID, h.ID, err)
		}
	}
	return nil
}

func (d *Dispatcher) deliver(ctx context.Context, m Message, attempt int) error {
	h, err := d.hooks.load(ctx, m.HookID)
	if fault.Is(err, fault.NotFound) {
		return nil // the webhook was deleted
	}
	if err != nil {
		return err
	}
	e, err := d.log.Get(ctx, m.EntryID)
	if fault.Is(err, fault.NotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if !Matches(h, e) {
		return nil // turned off or narrowed since the fan-out
	}
	body, err := d.render(e)
	if err != nil {
		return fmt.Errorf("render entry %s: %w", e.ID, err)
	}
	status, sendErr := d.post(ctx, h, body, m.DeliveryID)
	a := Attempt{Time: d.now().UnixMilli(), DeliveryID: m.DeliveryID, EntryID: e.ID, Attempt: attempt, Status: status}
	if sendErr != nil {
		a.Error = sendErr.Error()
	}
	d.record(ctx, h.ID, a)
	return sendErr
}

// post sends one signed delivery and treats anything but 2xx as a failure.
func (d *Dispatcher) post(ctx context.Context, h *Webhook, body []byte, deliveryID string) (int, error) {
	u, err := CheckURL(h.URL)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("build delivery: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "flagplane-webhooks/1")
	req.Header.Set(DeliveryHeader, deliveryID)
	if h.Sign {
		req.Header.Set(SignatureHeader, Sign(body, h.Secret))
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("deliver to %s: %w", u.Host, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, fmt.Errorf("deliver to %s: status %d", u.Host, resp.StatusCode)
	}
	return resp.StatusCode, nil
}

// Sign is the hex HMAC-SHA256 of the exact body bytes with the secret.
func Sign(body []byte, secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

func (d *Dispatcher) record(ctx context.Context, hookID string, a Attempt) {
	data, _ := json.Marshal(a)
	it := store.Item{PK: store.DeliveryPK(hookID), SK: fmt.Sprintf("%013d#%s#%d", a.Time, a.DeliveryID, a.Attempt),
		Version: 1, TTL: d.now().Add(attemptTTL).Unix(), Data: data}
	_ = d.table.Put(ctx, it, store.Cond{}) // the record is for people; a failure must not fail the delivery
}

// Attempts returns a webhook's latest delivery attempts, newest first.
func (s *Service) Attempts(ctx context.Context, id string, limit int) ([]Attempt, error) {
	page, err := s.hooks.Table.Query(ctx, store.Query{PK: store.DeliveryPK(id), Descending: true, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("list deliveries of webhook %q: %w", id, err)
	}
	out := make([]Attempt, 0, len(page.Items))
	for _, it := range page.Items {
		var a Attempt
		if err := json.Unmarshal(it.Data, &a); err == nil {
			out = append(out, a)
		}
	}
	return out, nil
}

// Matches reports whether h wants entry e: it is on, and it has no
// statements or they allow one of the entry's accesses.
func Matches(h *Webhook, e audit.Entry) bool {
	if !h.On {
		return false
	}
	if len(h.Statements) == 0 {
		return true
	}
	match, err := audit.Matcher(h.Statements)
	return err == nil && match(e)
}

// Backoff is the wait before attempt n+1 after n failed attempts:
// exponential from 2 s, capped at 5 minutes, with full jitter so retries of
// many deliveries spread out.
func Backoff(n int) time.Duration {
	base := 2 * time.Second << min(n-1, 8)
	if base > 5*time.Minute || base <= 0 {
		base = 5 * time.Minute
	}
	return base/2 + time.Duration(rand.Int64N(int64(base/2)+1))
}
