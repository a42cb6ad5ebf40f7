package segmentapi

import (
	"fmt"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/segment"
)

func TestFitPage(t *testing.T) {
	// keys makes a segment listing n keys of 97 bytes (100 in JSON).
	keys := func(n int) *segment.Segment {
		s := &segment.Segment{}
		for i := range n {
			s.Included = append(s.Included, fmt.Sprintf("%s%07d", strings.Repeat("k", 90), i))
		}
		return s
	}
	perPage := maxPageKeyBytes / (15000 * 100)
	for _, c := range []struct {
		name string
		page []*segment.Segment
		want int
	}{
		{"a page of small segments is kept whole", []*segment.Segment{keys(10), keys(10), keys(10)}, 3},
		{"a page of full segments stops once their keys pass the budget", []*segment.Segment{keys(15000), keys(15000), keys(15000), keys(15000)}, perPage},
		{"one segment always fits, however many keys it lists", []*segment.Segment{keys(60000)}, 1},
		{"an empty page stays empty", nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := fitPage(c.page); got != c.want {
				t.Errorf("fitPage kept %d segments, want %d", got, c.want)
			}
		})
	}
}
