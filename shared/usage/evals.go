package usage

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/flagplane/flagplane/shared/ingest"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/store"
)

// Evaluations is one flag's evaluations in one environment from..to, by
// variation ("0", "1", ..., "default", "unknown"), in buckets of unit
// (an hour, or a day starting at midnight in loc): one Query of the
// project partition over the flag's hourly counters.
func (rd *Reader) Evaluations(ctx context.Context, projectKey, envKey, flagKey string, from, to time.Time, unit time.Duration, loc *time.Location) (Series, error) {
	prefix := store.FlagEvalPrefix(envKey, flagKey)
	q := store.Query{PK: store.ProjectPartition(projectKey), SKFrom: prefix + from.UTC().Format(hourLayout), SKTo: prefix + to.UTC().Format(hourLayout)}
	bucketOf := func(t time.Time) time.Time {
		if unit == time.Hour {
			return t.Truncate(time.Hour)
		}
		l := t.In(loc)
		return time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, loc)
	}
	counts := map[string]map[int64]int64{}
	err := record.Each(ctx, rd.table, q, "evaluation counters", func(it store.Item) error {
		var fe ingest.FlagEvals
		if err := json.Unmarshal(it.Data, &fe); err != nil {
			return fmt.Errorf("decode evaluation counters %s: %w", it.SK, err)
		}
		h, err := time.Parse(hourLayout, fe.Hour)
		if err != nil {
			return nil
		}
		at := bucketOf(h).UnixMilli()
		for variation, n := range fe.Counts {
			if counts[variation] == nil {
				counts[variation] = map[int64]int64{}
			}
			counts[variation][at] += n
		}
		return nil
	})
	if err != nil {
		return Series{}, err
	}
	variations := make([]string, 0, len(counts))
	for v := range counts {
		variations = append(variations, v)
	}
	// Variations in index order, then default and unknown.
	sort.Slice(variations, func(i, j int) bool {
		a, aerr := strconv.Atoi(variations[i])
		b, berr := strconv.Atoi(variations[j])
		switch {
		case aerr == nil && berr == nil:
			return a < b
		case aerr == nil || berr == nil:
			return aerr == nil
		}
		return variations[i] < variations[j]
	})
	out := Series{Metadata: []map[string]any{}, Points: []map[string]int64{}}
	for _, v := range variations {
		out.Metadata = append(out.Metadata, map[string]any{"variation": v})
	}
	for t := bucketOf(from); !t.After(to); {
		p := map[string]int64{"time": t.UnixMilli()}
		for i, v := range variations {
			p[strconv.Itoa(i)] = counts[v][t.UnixMilli()]
		}
		out.Points = append(out.Points, p)
		if unit == time.Hour {
			t = t.Add(time.Hour)
		} else {
			t = t.AddDate(0, 0, 1)
		}
	}
	return out, nil
}
