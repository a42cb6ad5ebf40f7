package figures

import (
	"slices"
	"strings"
	"testing"
)

const doc = "# t\n\nThere are <!-- fig:ops -->196<!-- /fig --> operations,\n" +
	"| size | <!-- fig:size -->10.3 MB<!-- /fig --> |\n<!-- fig:ops -->196<!-- /fig --> again.\n"

func TestRegions(t *testing.T) {
	got := Regions([]byte(doc))
	want := []Region{{"ops", "196", 3}, {"size", "10.3 MB", 4}, {"ops", "196", 5}}
	if !slices.Equal(got, want) {
		t.Fatalf("regions %v, want %v", got, want)
	}
}

func TestCheck(t *testing.T) {
	sizes := []int64{10_290_000, 10_310_000}
	tests := []struct {
		name     string
		figs     []Figure
		optional []string
		want     []string // substrings of the problems, in order
	}{
		{"GIVEN figures that match THEN nothing is reported",
			[]Figure{{Name: "ops", Text: "196"}, {Name: "size", Text: "10.3 MB"}}, nil, nil},
		{"GIVEN a count that changed THEN each place it is shown is reported",
			[]Figure{{Name: "ops", Text: "197"}, {Name: "size", Text: "10.3 MB"}}, nil,
			[]string{`README.md:3: ops says "196", but it is "197" now`, `README.md:5: ops says "196"`}},
		{"GIVEN sizes within the tolerance THEN they are accepted",
			[]Figure{{Name: "ops", Text: "196"}, {Name: "size", Text: "10.4 MB", Accept: NearSizes(sizes, 0.1)}}, nil, nil},
		{"GIVEN sizes beyond the tolerance THEN they are reported",
			[]Figure{{Name: "ops", Text: "196"}, {Name: "size", Text: "10.5 MB", Accept: NearSizes([]int64{10_500_000}, 0.1)}}, nil,
			[]string{`size says "10.3 MB"`}},
		{"GIVEN a marker of no known figure THEN it is reported",
			[]Figure{{Name: "ops", Text: "196"}}, nil, []string{`no figure is called "size"`}},
		{"GIVEN a marker of an optional figure not measured THEN it is left alone",
			[]Figure{{Name: "ops", Text: "196"}}, []string{"size"}, nil},
		{"GIVEN a figure the README does not show THEN it is reported",
			[]Figure{{Name: "ops", Text: "196"}, {Name: "size", Text: "10.3 MB"}, {Name: "groups", Text: "25"}}, nil,
			[]string{"figure groups"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Check([]Doc{{Path: "README.md", Body: []byte(doc)}}, tc.figs, tc.optional)
			if len(got) != len(tc.want) {
				t.Fatalf("problems %q, want %d like %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d: %q lacks %q", i, got[i], w)
				}
			}
		})
	}
}

func TestCheckSeveralDocs(t *testing.T) {
	page := "# costs\n\nTotal <!-- fig:total -->$3.17<!-- /fig -->.\n\n| ops | <!-- fig:ops -->196<!-- /fig --> |\n"
	docs := []Doc{{Path: "README.md", Body: []byte(doc)}, {Path: "docs/costs.md", Body: []byte(page)}}
	t.Run("a figure shown only in a docs page counts as shown", func(t *testing.T) {
		got := Check(docs, []Figure{{Name: "ops", Text: "196"}, {Name: "size", Text: "10.3 MB"}, {Name: "total", Text: "$3.17"}}, nil)
		if len(got) != 0 {
			t.Fatalf("problems %q, want none", got)
		}
	})
	t.Run("a stale figure in a docs page is reported with that page's path and line", func(t *testing.T) {
		got := Check(docs, []Figure{{Name: "ops", Text: "196"}, {Name: "size", Text: "10.3 MB"}, {Name: "total", Text: "$3.20"}}, nil)
		want := []string{`docs/costs.md:3: total says "$3.17", but it is "$3.20" now`}
		if !slices.Equal(got, want) {
			t.Fatalf("problems %q, want %q", got, want)
		}
	})
	t.Run("a figure shown in the README and a page is checked in both", func(t *testing.T) {
		got := Check(docs, []Figure{{Name: "ops", Text: "197"}, {Name: "size", Text: "10.3 MB"}, {Name: "total", Text: "$3.17"}}, nil)
		want := []string{"README.md:3: ops", "README.md:5: ops", "docs/costs.md:5: ops"}
		if len(got) != len(want) {
			t.Fatalf("problems %q, want %d like %q", got, len(want), want)
		}
		for i, w := range want {
			if !strings.HasPrefix(got[i], w) {
				t.Errorf("problem %d: %q does not start with %q", i, got[i], w)
			}
		}
	})
	t.Run("a figure no doc shows is reported", func(t *testing.T) {
		got := Check(docs, []Figure{{Name: "ops", Text: "196"}, {Name: "size", Text: "10.3 MB"}, {Name: "total", Text: "$3.17"}, {Name: "groups", Text: "25"}}, nil)
		if len(got) != 1 || !strings.Contains(got[0], "figure groups") || !strings.Contains(got[0], "any of the 2 files read") {
			t.Fatalf("problems %q, want one naming figure groups and both docs", got)
		}
	})
}

func TestRewrite(t *testing.T) {
	// GIVEN new values for one figure and none for the other
	// WHEN the document is rewritten
	got := string(Rewrite([]byte(doc), []Figure{{Name: "ops", Text: "201"}}))
	// THEN every place of that figure changes and nothing else
	want := strings.ReplaceAll(doc, ">196<", ">201<")
	if got != want {
		t.Fatalf("rewritten:\n%s\nwant:\n%s", got, want)
	}
}

func TestRound(t *testing.T) {
	tests := []struct {
		v    float64
		sig  int
		want string
	}{
		{22134, 3, "22,100"},
		{2.128, 3, "2.13"},
		{0.2634, 2, "0.26"},
		{14.63, 3, "14.6"},
		{22.04, 2, "22"},
		{1234567, 2, "1,200,000"},
		{0, 3, "0"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			if got := Round(tc.v, tc.sig); got != tc.want {
				t.Fatalf("Round(%v, %d) = %q", tc.v, tc.sig, got)
			}
		})
	}
}

func TestSizeTexts(t *testing.T) {
	tests := []struct {
		name  string
		sizes []int64
		want  string
	}{
		{"GIVEN equal sizes THEN one number", []int64{10_290_000, 10_291_000}, "10.3 MB"},
		{"GIVEN different sizes THEN a range", []int64{8_520_000, 8_780_000}, "8.5–8.8 MB"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := SizeRange(tc.sizes); got != tc.want {
				t.Fatalf("SizeRange = %q, want %q", got, tc.want)
			}
			if !NearSizes(tc.sizes, 0.1)(tc.want) {
				t.Fatalf("NearSizes refuses its own text %q", tc.want)
			}
		})
	}
}

func TestBenchMetric(t *testing.T) {
	out := `goos: linux
BenchmarkEvaluate/compiled/allowed_by_the_last_statement-2  	 2000	 478.6 ns/op	 0 B/op	 0 allocs/op
BenchmarkGetEnvironmentLoopback-2   	    2000	     78325 ns/op	         2.888 p99-ms	     12767 req/s
BenchmarkListFlagsLoopback-2   	    2000	     1 ns/op	         9.1 p99-ms	     5000 req/s
BenchmarkListFlagsLoopback-2   	    2000	     1 ns/op	         12.0 p99-ms	     3000 req/s
BenchmarkListFlagsLoopback-2   	    2000	     1 ns/op	         8.0 p99-ms	     6000 req/s
BenchmarkSDKPoll/local/payload-2   	    2000	     1 ns/op	     10 requests/s
BenchmarkSDKPoll/local/payload-2   	    2000	     1 ns/op	     20 requests/s
`
	tests := []struct {
		prefix, unit string
		want         float64
		wantErr      bool
	}{
		{"BenchmarkEvaluate/compiled/allowed", "ns/op", 478.6, false},
		{"BenchmarkEvaluate/compiled/allowed", "allocs/op", 0, false},
		{"BenchmarkGetEnvironmentLoopback", "req/s", 12767, false},
		{"BenchmarkGetEnvironmentLoopback", "p99-ms", 2.888, false},
		{"BenchmarkWebhookDelivery", "ns/op", 0, true},
		{"BenchmarkListFlagsLoopback", "req/s", 5000, false},
		{"BenchmarkListFlagsLoopback", "p99-ms", 9.1, false},
		{"BenchmarkSDKPoll/local/payload", "requests/s", 15, false},
	}
	// With -count the figure is the median of a benchmark's lines.
	for _, tc := range tests {
		t.Run(tc.prefix+" "+tc.unit, func(t *testing.T) {
			got, err := BenchMetric(out, tc.prefix, tc.unit)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("got %v, %v; want %v (error %v)", got, err, tc.want, tc.wantErr)
			}
		})
	}
}
