package usage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/flagplane/flagplane/shared/ingest"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/store"
)

// StreamHour counts the streaming connections one SDK opened to one
// environment in one hour: flagplane streams to server-side SDKs in the
// local server only (in AWS they poll), so these are that server's.
type StreamHour struct {
	Hour       string `json:"hour"`
	ProjectKey string `json:"projectKey"`
	EnvKey     string `json:"environmentKey"`
	SDKName    string `json:"sdkName"`
	SDKVersion string `json:"sdkVersion"`
	Opened     int64  `json:"opened"`
}

// StreamDay is one rolled-up day of an SDK's streams to one environment.
type StreamDay struct {
	Day        string           `json:"day"`
	ProjectKey string           `json:"projectKey"`
	EnvKey     string           `json:"environmentKey"`
	SDKName    string           `json:"sdkName"`
	SDKVersion string           `json:"sdkVersion"`
	Opened     int64            `json:"opened"`
	Hourly     map[string]int64 `json:"hourly"`
	Through    string           `json:"through"`
}

// sdkOf reads "GoClient/7.14.6 ..." as name and version, bounded like the ingest's.
func sdkOf(userAgent string) (string, string) {
	first, _, _ := strings.Cut(strings.TrimSpace(userAgent), " ")
	name, version, _ := strings.Cut(first, "/")
	if len(name) > 64 {
		name = name[:64]
	}
	if len(version) > 32 {
		version = version[:32]
	}
	return name, version
}

// RecordStream counts one stream opened at now: a conditional increment
// of the hour's counter, retried when a concurrent open wins the race.
func (s *Service) RecordStream(ctx context.Context, projectKey, envKey, userAgent string) error {
	now := s.Now().UTC()
	hour := now.Format(hourLayout)
	name, version := sdkOf(userAgent)
	k := store.UsageStreamKey(hour, projectKey, envKey, ingest.CellID("server", name, version, ""))
	for attempt := 0; attempt < 8; attempt++ {
		h := StreamHour{Hour: hour, ProjectKey: projectKey, EnvKey: envKey, SDKName: name, SDKVersion: version}
		cond, version := store.IfNotExists(), int64(1)
		old, err := s.Table.Get(ctx, k)
		switch {
		case err == nil:
			if err := json.Unmarshal(old.Data, &h); err != nil {
				return fmt.Errorf("decode stream counter: %w", err)
			}
			cond, version = store.IfVersion(old.Version), old.Version+1
		case !errors.Is(err, store.ErrNotFound):
			return fmt.Errorf("read stream counter: %w", err)
		}
		h.Opened++
		data, _ := json.Marshal(h)
		err = s.Table.Put(ctx, store.Item{PK: k.PK, SK: k.SK, Version: version, TTL: now.Add(ingest.CellTTL).Unix(), Data: data}, cond)
		if !errors.Is(err, store.ErrConditionFailed) {
			return err
		}
	}
	return fmt.Errorf("count stream of %s/%s: %w", projectKey, envKey, store.ErrConflict)
}

// rollupStreams adds an hour's stream counters to the day's.
func rollupStreams(ctx context.Context, table store.Table, day time.Time, hour, through string, into map[store.Key]*StreamDay, order *[]store.Key) error {
	return record.Each(ctx, table, store.Query{PK: store.UsageStreamPartition(hour)}, "stream counters of "+hour, func(it store.Item) error {
		var h StreamHour
		if err := json.Unmarshal(it.Data, &h); err != nil {
			return fmt.Errorf("decode stream counter %s/%s: %w", it.PK, it.SK, err)
		}
		sdk := it.SK[strings.LastIndexByte(it.SK, '#')+1:]
		k := store.UsageDayStreamKey(day.Format(monthLayout), h.ProjectKey, h.EnvKey, day.Format("02"), sdk)
		d := into[k]
		if d == nil {
			d = &StreamDay{Day: day.Format(dayLayout), ProjectKey: h.ProjectKey, EnvKey: h.EnvKey, SDKName: h.SDKName,
				SDKVersion: h.SDKVersion, Hourly: map[string]int64{}, Through: through}
			into[k] = d
			*order = append(*order, k)
		}
		d.Opened += h.Opened
		d.Hourly[hour[8:]] += h.Opened
		return nil
	})
}

// asDay shapes a stream day as a day of events, for the series.
func (d StreamDay) asDay() Day {
	return Day{Day: d.Day, Sender: ingest.Sender{ProjectKey: d.ProjectKey, EnvKey: d.EnvKey, SDKType: "server", SDKName: d.SDKName,
		SDKVersion: d.SDKVersion}, Events: map[string]int64{"stream": d.Opened}, HourlyEvents: d.Hourly}
}
