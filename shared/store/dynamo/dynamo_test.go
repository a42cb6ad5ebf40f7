package dynamo

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/storetest"
)

// The tests against DynamoDB (Local) need FLAGPLANE_DYNAMODB_ENDPOINT, e.g.
// http://127.0.0.1:8765 from localstack/dynamodb-local.sh. Without it they
// skip, unless FLAGPLANE_REQUIRE_DYNAMODB=1 says skipping is a failure.
const (
	envEndpoint = "FLAGPLANE_DYNAMODB_ENDPOINT"
	envRequire  = "FLAGPLANE_REQUIRE_DYNAMODB"
)

// local is the one table every test of this run shares; each test writes
// under its own partition keys. TestMain deletes it.
var local struct {
	once     sync.Once
	endpoint string
	name     string
	counter  *CallCounter // of client, to prove no test ever scanned
	client   *dynamodb.Client
	table    *Table
	err      error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if local.name != "" && local.err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if err := DeleteTable(ctx, local.client, local.name); err != nil {
			fmt.Fprintf(os.Stderr, "delete test table: %v\n", err)
			code = max(code, 1)
		}
		cancel()
		if n := local.counter.Counts()["Scan"]; n > 0 {
			fmt.Fprintf(os.Stderr, "the backend made %d Scan calls\n", n)
			code = max(code, 1)
		}
	}
	os.Exit(code)
}

// endpoint returns the DynamoDB endpoint to test against, or skips.
func endpoint(tb testing.TB) string {
	tb.Helper()
	ep := os.Getenv(envEndpoint)
	if ep == "" {
		if os.Getenv(envRequire) == "1" {
			tb.Fatalf("%s=1 but %s is not set; start localstack/dynamodb-local.sh and set it to http://127.0.0.1:<port>", envRequire, envEndpoint)
		}
		tb.Skipf("%s not set; run localstack/dynamodb-local.sh start and set it to test against DynamoDB Local", envEndpoint)
	}
	return ep
}

// newClient returns a client for ep with dummy credentials, independent of
// the environment's AWS settings.
func newClient(ep string, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	cfg := aws.Config{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("flagplane", "flagplane", ""),
		BaseEndpoint: aws.String(ep),
	}
	return dynamodb.NewFromConfig(cfg, optFns...)
}

// sharedTable creates the run's table on first use.
func sharedTable(tb testing.TB) *Table {
	tb.Helper()
	ep := endpoint(tb)
	local.once.Do(func() {
		local.endpoint = ep
		local.counter = NewCallCounter()
		local.client = newClient(ep, local.counter.Option())
		local.name = testTableName()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if local.err = CreateTable(ctx, local.client, local.name); local.err != nil {
			return
		}
		local.table, local.err = New(local.client, local.name, Options{})
	})
	if local.err != nil {
		tb.Fatalf("test table: %v", local.err)
	}
	return local.table
}

func testTableName() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("flagplane-test-%s-%s", time.Now().UTC().Format("20060102T150405"), hex.EncodeToString(b))
}

// tempTable creates a table for one test, deleted when it ends.
func tempTable(t *testing.T, client *dynamodb.Client) string {
	t.Helper()
	name := testTableName()
	if err := CreateTable(t.Context(), client, name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := DeleteTable(context.Background(), client, name); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return name
}

func uniquePK(t *testing.T) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "dynamotest-" + t.Name() + "-" + hex.EncodeToString(b)
}

func TestConformance(t *testing.T) {
	table := sharedTable(t)
	storetest.Run(t, func(tb testing.TB) store.Table { return table })
}

func TestCreateTable(t *testing.T) {
	sharedTable(t)
	ctx := t.Context()
	out, err := local.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(local.name)})
	if err != nil {
		t.Fatal(err)
	}
	d := out.Table
	if d.TableStatus != types.TableStatusActive {
		t.Errorf("status %s", d.TableStatus)
	}
	if d.BillingModeSummary == nil || d.BillingModeSummary.BillingMode != types.BillingModePayPerRequest {
		t.Errorf("billing mode %+v, want PAY_PER_REQUEST", d.BillingModeSummary)
	}
	if len(d.GlobalSecondaryIndexes) != 1 {
		t.Fatalf("%d indexes, want 1", len(d.GlobalSecondaryIndexes))
	}
	gsi := d.GlobalSecondaryIndexes[0]
	if aws.ToString(gsi.IndexName) != store.IndexGSI1 || gsi.Projection.ProjectionType != types.ProjectionTypeAll ||
		aws.ToString(gsi.KeySchema[0].AttributeName) != store.AttrGSI1PK || aws.ToString(gsi.KeySchema[1].AttributeName) != store.AttrGSI1SK {
		t.Errorf("index %s over %v projecting %s", aws.ToString(gsi.IndexName), gsi.KeySchema, gsi.Projection.ProjectionType)
	}
	ttl, err := local.client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(local.name)})
	if err != nil {
		t.Fatal(err)
	}
	if s := ttl.TimeToLiveDescription; s == nil || aws.ToString(s.AttributeName) != store.AttrTTL ||
		(s.TimeToLiveStatus != types.TimeToLiveStatusEnabled && s.TimeToLiveStatus != types.TimeToLiveStatusEnabling) {
		t.Errorf("time to live %+v, want enabled on %s", s, store.AttrTTL)
	}

	if err := CreateTable(ctx, local.client, local.name); !errors.Is(err, ErrTableExists) {
		t.Errorf("creating it again: %v, want ErrTableExists", err)
	}
	if err := DeleteTable(ctx, local.client, "flagplane-test-never-created"); err != nil {
		t.Errorf("deleting a missing table: %v", err)
	}
}

func TestItemAttributes(t *testing.T) {
	tbl := sharedTable(t)
	ctx := t.Context()
	pk := uniquePK(t)
	full := store.Item{PK: pk, SK: "full", GSI1PK: "g", GSI1SK: "s", Version: 3, TTL: 1893456000, Data: []byte("{}")}
	bare := store.Item{PK: pk, SK: "bare", Version: 1}
	for _, it := range []store.Item{full, bare} {
		if err := tbl.Put(ctx, it, store.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	raw := func(sk string) map[string]types.AttributeValue {
		out, err := local.client.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(local.name), Key: keyAttrs(store.Key{PK: pk, SK: sk}), ConsistentRead: aws.Bool(true),
		})
		if err != nil {
			t.Fatal(err)
		}
		return out.Item
	}
	names := func(av map[string]types.AttributeValue) []string {
		var n []string
		for k := range av {
			n = append(n, k)
		}
		slices.Sort(n)
		return n
	}
	f := raw("full")
	if got, want := names(f), []string{"GSI1PK", "GSI1SK", "PK", "SK", "data", "ttl", "ver"}; !slices.Equal(got, want) {
		t.Errorf("full item attributes %q, want %q", got, want)
	}
	if v, ok := f[store.AttrVersion].(*types.AttributeValueMemberN); !ok || v.Value != "3" {
		t.Errorf("ver = %#v, want N 3", f[store.AttrVersion])
	}
	if v, ok := f[store.AttrTTL].(*types.AttributeValueMemberN); !ok || v.Value != "1893456000" {
		t.Errorf("ttl = %#v, want N 1893456000", f[store.AttrTTL])
	}
	if v, ok := f[store.AttrData].(*types.AttributeValueMemberB); !ok || string(v.Value) != "{}" {
		t.Errorf("data = %#v, want B {}", f[store.AttrData])
	}
	// Index keys and ttl are left out, not stored empty.
	if got, want := names(raw("bare")), []string{"PK", "SK", "data", "ver"}; !slices.Equal(got, want) {
		t.Errorf("bare item attributes %q, want %q", got, want)
	}

	// Large, repetitive data is stored deflated and read back as written.
	big := store.Item{PK: pk, SK: "big", Version: 1, Data: []byte(`{"items":[` + strings.Repeat(`{"key":"flag","on":true},`, 60) + `{}]}`)}
	if err := tbl.Put(ctx, big, store.Cond{}); err != nil {
		t.Fatal(err)
	}
	b := raw("big")
	if got, want := names(b), []string{"PK", "SK", "dz", "ver"}; !slices.Equal(got, want) {
		t.Errorf("big item attributes %q, want %q", got, want)
	}
	if v, ok := b[attrDataDeflated].(*types.AttributeValueMemberB); !ok || len(v.Value) >= len(big.Data)/4 {
		t.Errorf("dz = %d bytes for %d of data, want under a quarter", len(v.Value), len(big.Data))
	}
	got, err := tbl.Get(ctx, big.Key())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Data, big.Data) {
		t.Errorf("big item read back as %q", got.Data)
	}
	page, err := tbl.Query(ctx, store.Query{PK: pk, SKFrom: "big", SKTo: "big"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 1 || !bytes.Equal(page.Items[0].Data, big.Data) {
		t.Errorf("query read the big item back as %+v", page.Items)
	}
}

// The end-to-end tier's capacity proxy doubles the units DynamoDB Local
// reports for a transaction, since DynamoDB bills transactional writes
// twice: this holds DynamoDB Local to reporting them once.
func TestDynamoDBLocalReportsTransactionsUnbilled(t *testing.T) {
	sharedTable(t)
	pk := uniquePK(t)
	put := func(sk string) types.TransactWriteItem {
		return types.TransactWriteItem{Put: &types.Put{TableName: aws.String(local.name), Item: itemAttrs(store.Item{PK: pk, SK: sk, Version: 1, Data: []byte(`{}`)})}}
	}
	out, err := local.client.TransactWriteItems(t.Context(), &dynamodb.TransactWriteItemsInput{
		TransactItems:          []types.TransactWriteItem{put("a"), put("b")},
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
	})
	if err != nil {
		t.Fatal(err)
	}
	units := 0.0
	for _, c := range out.ConsumedCapacity {
		units += aws.ToFloat64(c.CapacityUnits)
	}
	if units != 2 {
		t.Errorf("DynamoDB Local reports %v units for a transaction of two small puts, want 2 (DynamoDB bills 4); "+
			"if it now bills as DynamoDB does, drop transactionalOps' doubling in shared/e2e/cost_test.go", units)
	}
}

func TestItemDataDeflate(t *testing.T) {
	repetitive := []byte(`{"environments":{` + strings.Repeat(`"production":{"on":false,"targets":[],"rules":[]},`, 20) + `"x":{}}}`)
	random := make([]byte, 2000)
	rand.Read(random)
	for _, tc := range []struct {
		name     string
		data     []byte
		deflated bool
	}{
		{"GIVEN small data THEN it is stored as is", []byte(`{"key":"a"}`), false},
		{"GIVEN repetitive JSON of a few KB THEN it is stored deflated", repetitive, true},
		{"GIVEN data that does not shrink by a tenth THEN it is stored as is", random, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			av := itemAttrs(store.Item{PK: "p", SK: "s", Version: 1, Data: tc.data})
			_, hasZ := av[attrDataDeflated]
			_, hasPlain := av[store.AttrData]
			if hasZ != tc.deflated || hasPlain == tc.deflated {
				t.Fatalf("deflated %v, plain %v; want deflated %v", hasZ, hasPlain, tc.deflated)
			}
			it, err := itemFromAttrs(av, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(it.Data, tc.data) {
				t.Errorf("read back %d bytes, want the %d written", len(it.Data), len(tc.data))
			}
		})
	}
	t.Run("GIVEN corrupt deflated data THEN reading the item fails, naming it", func(t *testing.T) {
		av := itemAttrs(store.Item{PK: "p", SK: "s", Version: 1})
		delete(av, store.AttrData)
		av[attrDataDeflated] = &types.AttributeValueMemberB{Value: []byte{0xff, 0x00, 0x13}}
		if _, err := itemFromAttrs(av, nil); err == nil || !strings.Contains(err.Error(), "p/s") {
			t.Errorf("err = %v, want an error naming p/s", err)
		}
	})
}

func TestInflateCache(t *testing.T) {
	doc := func(key string) []byte {
		return []byte(`{"key":"` + key + `","environments":{` + strings.Repeat(`"production":{"on":false,"targets":[]},`, 20) + `"x":{}}}`)
	}
	var c inflateCache
	t.Run("GIVEN the same deflated bytes twice THEN the second read is the first's data", func(t *testing.T) {
		z := deflate(doc("a"))
		first, err := c.inflate(z)
		if err != nil {
			t.Fatal(err)
		}
		second, err := c.inflate(bytes.Clone(z))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, doc("a")) || &first[0] != &second[0] {
			t.Errorf("second read did not come from the cache")
		}
	})
	t.Run("GIVEN other deflated bytes THEN their own data is read", func(t *testing.T) {
		got, err := c.inflate(deflate(doc("b")))
		if err != nil || !bytes.Equal(got, doc("b")) {
			t.Errorf("got %q, %v", got, err)
		}
	})
	t.Run("GIVEN the cache is full THEN it starts over", func(t *testing.T) {
		c.bytes = inflateCacheBytes
		if _, err := c.inflate(deflate(doc("c"))); err != nil {
			t.Fatal(err)
		}
		if len(c.data) != 1 {
			t.Errorf("cache holds %d entries after starting over, want 1", len(c.data))
		}
	})
}

func BenchmarkItemDataDeflate(b *testing.B) {
	data := []byte(`{"environments":{` + strings.Repeat(`"production":{"on":false,"targets":[],"rules":[]},`, 30) + `"x":{}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := itemFromAttrs(itemAttrs(store.Item{PK: "p", SK: "s", Version: 1, Data: data}), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkItemDataInflateCached is what a list pays per unchanged flag.
func BenchmarkItemDataInflateCached(b *testing.B) {
	data := []byte(`{"environments":{` + strings.Repeat(`"production":{"on":false,"targets":[],"rules":[]},`, 30) + `"x":{}}}`)
	av := itemAttrs(store.Item{PK: "p", SK: "s", Version: 1, Data: data})
	var c inflateCache
	b.ReportAllocs()
	for b.Loop() {
		if _, err := itemFromAttrs(av, &c); err != nil {
			b.Fatal(err)
		}
	}
}

func TestErrors(t *testing.T) {
	tbl := sharedTable(t)
	ctx := t.Context()
	pk := uniquePK(t)

	_, err := tbl.Get(ctx, store.Key{PK: pk, SK: "missing"})
	if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), pk) {
		t.Errorf("get missing: %v, want ErrNotFound naming the key", err)
	}
	it := store.Item{PK: pk, SK: "x", Version: 1}
	if err := tbl.Put(ctx, it, store.IfNotExists()); err != nil {
		t.Fatal(err)
	}
	err = tbl.Put(ctx, it, store.IfNotExists())
	if !errors.Is(err, store.ErrConditionFailed) || !strings.Contains(err.Error(), pk) {
		t.Errorf("put twice: %v, want ErrConditionFailed naming the key", err)
	}
	if err := tbl.Delete(ctx, it.Key(), store.Cond{Kind: 42}); err == nil || errors.Is(err, store.ErrConditionFailed) {
		t.Errorf("unknown condition: %v", err)
	}

	// Errors that are not about conditions keep the SDK error in the chain.
	bad, err := New(local.client, "flagplane-test-no-such-table", Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = bad.Get(ctx, it.Key())
	var notFound *types.ResourceNotFoundException
	if !errors.As(err, &notFound) || errors.Is(err, store.ErrNotFound) {
		t.Errorf("get from a missing table: %v, want ResourceNotFoundException and not ErrNotFound", err)
	}

	// A cancelled context surfaces as such.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := tbl.Get(cctx, it.Key()); !errors.Is(err, context.Canceled) {
		t.Errorf("get with cancelled context: %v", err)
	}

	// A check must check something.
	err = tbl.Transact(ctx, []store.Write{store.Check(it.Key(), store.Cond{})})
	if err == nil || errors.Is(err, store.ErrConditionFailed) {
		t.Errorf("check always: %v, want a plain error", err)
	}
}

func TestTransactConditionFailedIndex(t *testing.T) {
	tbl := sharedTable(t)
	ctx := t.Context()
	pk := uniquePK(t)
	for _, sk := range []string{"b", "c"} {
		if err := tbl.Put(ctx, store.Item{PK: pk, SK: sk, Version: 5}, store.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	ws := []store.Write{
		store.Put(store.Item{PK: pk, SK: "a", Version: 1}, store.IfNotExists()),
		store.Check(store.Key{PK: pk, SK: "b"}, store.IfVersion(5)),
		store.Put(store.Item{PK: pk, SK: "b2", Version: 1}, store.IfNotExists()),
		store.Delete(store.Key{PK: pk, SK: "c"}, store.IfVersion(4)), // stale
	}
	err := tbl.Transact(ctx, ws)
	var txErr *store.TxError
	if !errors.As(err, &txErr) || !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("got %v, want *store.TxError", err)
	}
	if txErr.Index != 3 || txErr.Key != (store.Key{PK: pk, SK: "c"}) {
		t.Fatalf("TxError %+v, want index 3 key %s/c", txErr, pk)
	}
	if _, err := tbl.Get(ctx, store.Key{PK: pk, SK: "a"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("write 0 was applied: %v", err)
	}
}

func TestCallCounts(t *testing.T) {
	sharedTable(t)
	ctx := t.Context()
	counter := NewCallCounter()
	// An explicit secret: the lazily loaded one would add a GetItem.
	tbl, err := New(newClient(local.endpoint, counter.Option()), local.name, Options{CursorSecret: []byte("0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	pk := uniquePK(t)
	for i := range 5 {
		if err := tbl.Put(ctx, store.Item{PK: pk, SK: fmt.Sprintf("%d", i), Version: 1}, store.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	assertCounts(t, counter, map[string]int{"PutItem": 5})

	counter.Reset()
	if _, err := tbl.Get(ctx, store.Key{PK: pk, SK: "0"}); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Get(ctx, store.Key{PK: pk, SK: "missing"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	assertCounts(t, counter, map[string]int{"GetItem": 2})

	counter.Reset()
	q := store.Query{PK: pk, Limit: 2}
	var pages int
	for {
		p, err := tbl.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if p.Cursor == "" {
			break
		}
		q.Cursor = p.Cursor
	}
	if pages != 3 {
		t.Errorf("%d pages of 2 for 5 items, want 3", pages)
	}
	assertCounts(t, counter, map[string]int{"Query": 3})

	counter.Reset()
	// An empty range needs no call at all.
	if p, err := tbl.Query(ctx, store.Query{PK: pk, SKFrom: "9", SKTo: "1"}); err != nil || len(p.Items) != 0 {
		t.Fatalf("empty range: %d items, %v", len(p.Items), err)
	}
	err = tbl.Transact(ctx, []store.Write{
		store.Put(store.Item{PK: pk, SK: "t", Version: 1}, store.Cond{}),
		store.Delete(store.Key{PK: pk, SK: "0"}, store.IfExists()),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := tbl.Delete(ctx, store.Key{PK: pk, SK: "1"}, store.Cond{}); err != nil {
		t.Fatal(err)
	}
	assertCounts(t, counter, map[string]int{"TransactWriteItems": 1, "DeleteItem": 1})
	if counter.Total() != 2 {
		t.Errorf("total %d, want 2", counter.Total())
	}
}

func assertCounts(t *testing.T, c *CallCounter, want map[string]int) {
	t.Helper()
	got := c.Counts()
	if len(got) != len(want) {
		t.Errorf("calls %v, want %v", got, want)
		return
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("calls %v, want %v", got, want)
			return
		}
	}
}

func TestLazyCursorSecret(t *testing.T) {
	sharedTable(t)
	ctx := t.Context()
	// A table of its own, so the secret does not exist yet.
	name := tempTable(t, newClient(local.endpoint))
	counter := NewCallCounter()
	client := newClient(local.endpoint, counter.Option())

	pk := uniquePK(t)
	seed, err := New(client, name, Options{CursorSecret: []byte("seed-secret-0123456789")})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := seed.Put(ctx, store.Item{PK: pk, SK: fmt.Sprintf("%d", i), Version: 1}, store.Cond{}); err != nil {
			t.Fatal(err)
		}
	}

	// Several instances start at once; all must settle on one secret.
	const instances = 6
	tables := make([]*Table, instances)
	cursors := make([]string, instances)
	errs := make([]error, instances)
	counter.Reset()
	var wg sync.WaitGroup
	for i := range instances {
		tables[i], err = New(client, name, Options{})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			p, err := tables[i].Query(ctx, store.Query{PK: pk, Limit: 1})
			cursors[i], errs[i] = p.Cursor, err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil || cursors[i] == "" {
			t.Fatalf("instance %d: cursor %q, error %v", i, cursors[i], err)
		}
	}
	c := counter.Counts()
	t.Logf("first use by %d instances at once: %v", instances, c)
	if c["Query"] != instances || c["PutItem"] < 1 || c["GetItem"] < instances {
		t.Errorf("calls %v: want %d queries, each instance reading the secret, at least one creating it", c, instances)
	}
	// Every instance accepts every other instance's cursor.
	for i, tbl := range tables {
		for j, cur := range cursors {
			p, err := tbl.Query(ctx, store.Query{PK: pk, Limit: 1, Cursor: cur})
			if err != nil || len(p.Items) != 1 || p.Items[0].SK != "1" {
				t.Fatalf("instance %d continuing instance %d's cursor: %+v, %v", i, j, p, err)
			}
		}
	}
	// The secret is loaded once per instance: no further calls but the queries.
	counter.Reset()
	if _, err := tables[0].Query(ctx, store.Query{PK: pk, Limit: 1}); err != nil {
		t.Fatal(err)
	}
	assertCounts(t, counter, map[string]int{"Query": 1})

	// A later instance reads the stored secret and creates nothing.
	counter.Reset()
	late, err := New(client, name, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := late.Query(ctx, store.Query{PK: pk, Limit: 1, Cursor: cursors[0]})
	if err != nil || len(p.Items) != 1 {
		t.Fatalf("late instance: %+v, %v", p, err)
	}
	assertCounts(t, counter, map[string]int{"GetItem": 1, "Query": 1})

	stored, err := late.Get(ctx, store.MetaKey("cursor-secret"))
	if err != nil || len(stored.Data) != 32 {
		t.Fatalf("stored secret: %d bytes, %v", len(stored.Data), err)
	}

	// Another secret does not accept these cursors.
	_, err = seed.Query(ctx, store.Query{PK: pk, Limit: 1, Cursor: cursors[0]})
	if !errors.Is(err, store.ErrBadCursor) {
		t.Fatalf("cursor under another secret: %v, want ErrBadCursor", err)
	}
}

// TestQueryResponseLimit fills more than DynamoDB's 1 MB per response: a
// page then ends early with a cursor, and the cursors still visit every item.
func TestQueryResponseLimit(t *testing.T) {
	tbl := sharedTable(t)
	ctx := t.Context()
	pk := uniquePK(t)
	const n = 8
	for i := range n {
		data := make([]byte, 300*1024) // random, so storing it deflated gains nothing
		rand.Read(data)
		if err := tbl.Put(ctx, store.Item{PK: pk, SK: fmt.Sprintf("%02d", i), Version: 1, Data: data}, store.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, limit := range []int{0, 10} {
		q := store.Query{PK: pk, Limit: limit}
		var sks []string
		first := -1
		for range n + 2 {
			p, err := tbl.Query(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if first < 0 {
				first = len(p.Items)
			}
			for _, it := range p.Items {
				if len(it.Data) != 300*1024 {
					t.Fatalf("item %s has %d bytes", it.SK, len(it.Data))
				}
				sks = append(sks, it.SK)
			}
			if p.Cursor == "" {
				break
			}
			q.Cursor = p.Cursor
		}
		if first >= n {
			t.Errorf("limit %d: first page has all %d items of 2.4 MB", limit, first)
		}
		want := []string{"00", "01", "02", "03", "04", "05", "06", "07"}
		if !slices.Equal(sks, want) {
			t.Errorf("limit %d: got %q", limit, sks)
		}
	}
}

// TestNewClientEndpointFromEnv checks that the SDK honours the standard
// endpoint variables (the local commands load the shared config so), so
// nothing of ours is needed to reach DynamoDB Local.
func TestNewClientEndpointFromEnv(t *testing.T) {
	sharedTable(t)
	for _, v := range []string{"AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL"} {
		t.Run(v, func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("AWS_CONFIG_FILE", dir+"/config")
			t.Setenv("AWS_SHARED_CREDENTIALS_FILE", dir+"/credentials")
			t.Setenv("AWS_ACCESS_KEY_ID", "flagplane")
			t.Setenv("AWS_SECRET_ACCESS_KEY", "flagplane")
			t.Setenv("AWS_REGION", "us-east-1")
			for _, u := range []string{"AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL", "AWS_PROFILE", "AWS_SESSION_TOKEN"} {
				t.Setenv(u, "") // restores the value afterwards
				os.Unsetenv(u)
			}
			t.Setenv(v, local.endpoint)
			counter := NewCallCounter()
			cfg, err := config.LoadDefaultConfig(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			client := dynamodb.NewFromConfig(cfg, counter.Option())
			if _, err := client.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: aws.String(local.name)}); err != nil {
				t.Fatal(err)
			}
			assertCounts(t, counter, map[string]int{"DescribeTable": 1})
		})
	}
}

// The tests below need no DynamoDB: a stub transport answers like the service.

type stubTransport struct {
	mu      sync.Mutex
	targets []string
	status  int
	body    string
}

func (s *stubTransport) Do(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.targets = append(s.targets, strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810."))
	status, body := s.status, s.body
	s.mu.Unlock()
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
	}
	if status == 0 {
		status, body = http.StatusOK, "{}"
	}
	return &http.Response{
		StatusCode: status,
		Header:     http.Header{"Content-Type": []string{"application/x-amz-json-1.0"}},
		Body:       io.NopCloser(strings.NewReader(body)),
		Request:    r,
	}, nil
}

func stubTable(t *testing.T, s *stubTransport, optFns ...func(*dynamodb.Options)) *Table {
	t.Helper()
	client := dynamodb.NewFromConfig(aws.Config{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("stub", "stub", ""),
		BaseEndpoint: aws.String("http://127.0.0.1:1"),
		HTTPClient:   s,
	}, optFns...)
	tbl, err := New(client, "stub", Options{CursorSecret: []byte("0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func TestCallCounterStub(t *testing.T) {
	counter := NewCallCounter()
	s := &stubTransport{}
	tbl := stubTable(t, s, counter.Option())
	ctx := t.Context()

	if _, err := tbl.Get(ctx, store.Key{PK: "p", SK: "s"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get of an empty response: %v, want ErrNotFound", err)
	}
	if _, err := tbl.Query(ctx, store.Query{PK: "p"}); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("stub")}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { _, _ = tbl.Get(ctx, store.Key{PK: "p", SK: "s"}) })
	}
	wg.Wait()
	assertCounts(t, counter, map[string]int{"GetItem": 21, "Query": 1, "Scan": 1})
	if counter.Total() != 23 {
		t.Errorf("total %d, want 23", counter.Total())
	}
	if got := len(s.targets); got != 23 {
		t.Errorf("%d requests sent, want 23", got)
	}
	counter.Reset()
	if counter.Total() != 0 || len(counter.Counts()) != 0 {
		t.Errorf("after reset: %v", counter.Counts())
	}
}

func TestTransactCancellationStub(t *testing.T) {
	ws := []store.Write{
		store.Put(store.Item{PK: "p", SK: "a", Version: 1}, store.IfNotExists()),
		store.Check(store.Key{PK: "p", SK: "b"}, store.IfExists()),
		store.Delete(store.Key{PK: "p", SK: "c"}, store.IfVersion(3)),
	}
	cancelled := func(codes ...string) string {
		var reasons []string
		for _, c := range codes {
			reasons = append(reasons, fmt.Sprintf(`{"Code":%q}`, c))
		}
		return `{"__type":"com.amazonaws.dynamodb.v20120810#TransactionCanceledException",` +
			`"Message":"Transaction cancelled, please refer cancellation reasons for specific reasons [` + strings.Join(codes, ", ") + `]",` +
			`"CancellationReasons":[` + strings.Join(reasons, ",") + `]}`
	}

	t.Run("a failed condition names its write", func(t *testing.T) {
		s := &stubTransport{status: 400, body: cancelled("None", "None", "ConditionalCheckFailed")}
		err := stubTable(t, s).Transact(t.Context(), ws)
		var txErr *store.TxError
		if !errors.As(err, &txErr) || !errors.Is(err, store.ErrConditionFailed) {
			t.Fatalf("got %v, want *store.TxError", err)
		}
		if txErr.Index != 2 || txErr.Key != (store.Key{PK: "p", SK: "c"}) {
			t.Fatalf("TxError %+v, want index 2", txErr)
		}
	})

	t.Run("a conflict is a retryable conflict, not a failed condition", func(t *testing.T) {
		s := &stubTransport{status: 400, body: cancelled("None", "TransactionConflict", "None")}
		err := stubTable(t, s).Transact(t.Context(), ws)
		var txErr *store.TxError
		if !errors.Is(err, store.ErrConflict) || errors.As(err, &txErr) || errors.Is(err, store.ErrConditionFailed) {
			t.Fatalf("got %v, want store.ErrConflict", err)
		}
		var tce *types.TransactionCanceledException
		if !errors.As(err, &tce) || !strings.Contains(err.Error(), "TransactionConflict") {
			t.Fatalf("got %v, want the cancellation reasons and SDK error kept", err)
		}
	})

	t.Run("a put's failed condition", func(t *testing.T) {
		s := &stubTransport{status: 400, body: `{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","message":"The conditional request failed"}`}
		err := stubTable(t, s).Put(t.Context(), store.Item{PK: "p", SK: "a"}, store.IfExists())
		if !errors.Is(err, store.ErrConditionFailed) || !strings.Contains(err.Error(), "p/a") {
			t.Fatalf("got %v", err)
		}
	})
}

func TestQueryInput(t *testing.T) {
	cases := []struct {
		q    store.Query
		expr string
		vals []string
	}{
		{store.Query{PK: "p"}, "#pk = :pk", []string{":pk"}},
		{store.Query{PK: "p", SKPrefix: "a"}, "#pk = :pk AND begins_with(#sk, :prefix)", []string{":pk", ":prefix"}},
		{store.Query{PK: "p", SKPrefix: "a", SKFrom: "b", SKTo: "c"}, "#pk = :pk AND #sk BETWEEN :from AND :to", []string{":from", ":pk", ":to"}},
		{store.Query{PK: "p", SKPrefix: "a", SKFrom: "b"}, "#pk = :pk AND #sk >= :from", []string{":from", ":pk"}},
		{store.Query{PK: "p", SKTo: "c"}, "#pk = :pk AND #sk <= :to", []string{":pk", ":to"}},
	}
	for _, c := range cases {
		for _, index := range []string{"", store.IndexGSI1} {
			c.q.Index = index
			in := queryInput(aws.String("t"), c.q)
			if got := aws.ToString(in.KeyConditionExpression); got != c.expr {
				t.Errorf("%+v: expression %q, want %q", c.q, got, c.expr)
			}
			var vals []string
			for k := range in.ExpressionAttributeValues {
				vals = append(vals, k)
			}
			slices.Sort(vals)
			if !slices.Equal(vals, c.vals) {
				t.Errorf("%+v: values %q, want %q", c.q, vals, c.vals)
			}
			wantPK := store.AttrPK
			if index != "" {
				wantPK = store.AttrGSI1PK
			}
			if in.ExpressionAttributeNames["#pk"] != wantPK {
				t.Errorf("%+v: #pk is %q", c.q, in.ExpressionAttributeNames["#pk"])
			}
			if consistent := aws.ToBool(in.ConsistentRead); consistent != (index == "") {
				t.Errorf("%+v: consistent read %v", c.q, consistent)
			}
		}
	}
	if in := queryInput(aws.String("t"), store.Query{PK: "p", Descending: true}); aws.ToBool(in.ScanIndexForward) {
		t.Error("descending query scans forward")
	}
	if in := queryInput(aws.String("t"), store.Query{PK: "p", Eventual: true}); aws.ToBool(in.ConsistentRead) {
		t.Error("an eventual table query asks for a consistent read")
	}
}
