// Package dynamostore writes flag data to a DynamoDB table in the layout of
// LaunchDarkly's DynamoDB SDK integration (go-server-sdk-dynamodb): items
// with partition key "namespace" ("<prefix>:features", "<prefix>:segments")
// and sort key "key" (the flag key), a number "version" and the string
// "item" (the flag JSON); the item "<prefix>:$inited"; and the big segment
// metadata item "<prefix>:big_segments_metadata" with "synchronizedOn".
package dynamostore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/flagplane/flagplane/shared/awsenv"
	"github.com/flagplane/flagplane/shared/featurestore"
)

// The attribute names the SDK integration reads.
const (
	partitionKey = "namespace"
	sortKey      = "key"
	versionAttr  = "version"
	itemAttr     = "item"
	syncedAttr   = "synchronizedOn"
)

// Timeout bounds each request.
const Timeout = 10 * time.Second

// Store is one DynamoDB table.
type Store struct {
	client *dynamodb.Client
	table  string
	prefix string
}

// Open builds a client for the configuration: its access key when given,
// else the function's own credentials, through the role (with its
// external id) when one is named; control, when set, vets the addresses
// dialled (the SSRF guard, for an endpoint override).
func Open(_ context.Context, s featurestore.Settings, control func(network, address string, c syscall.RawConn) error) (*Store, error) {
	dialer := &net.Dialer{Timeout: Timeout, Control: control}
	// A buildable client, so the SDK can still add a custom CA bundle (AWS_CA_BUNDLE).
	httpClient := awshttp.NewBuildableClient().WithTimeout(Timeout).WithDialerOptions(func(d *net.Dialer) {
		d.Timeout, d.Control = dialer.Timeout, dialer.Control
	}).WithTransportOptions(func(t *http.Transport) { t.ResponseHeaderTimeout = Timeout })
	// Not the SDK's full configuration loader: it weighs megabytes in
	// every bootstrap (see package awsenv).
	var creds aws.CredentialsProvider
	if s.AccessKeyID != "" {
		creds = credentials.NewStaticCredentialsProvider(s.AccessKeyID, s.SecretAccessKey, "")
	} else {
		own, err := awsenv.Config()
		if err != nil {
			return nil, fmt.Errorf("no credentials: give accessKeyId and secretAccessKey, or run flagplane with AWS credentials (%v)", err)
		}
		creds = own.Credentials
	}
	if s.RoleARN != "" {
		stsClient := sts.New(sts.Options{Region: s.Region, Credentials: creds, HTTPClient: httpClient})
		creds = aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(stsClient, s.RoleARN, func(o *stscreds.AssumeRoleOptions) {
			o.RoleSessionName = "flagplane-featurestore"
			if s.ExternalID != "" {
				o.ExternalID = aws.String(s.ExternalID)
			}
		}))
	}
	opts := dynamodb.Options{Region: s.Region, Credentials: creds, HTTPClient: httpClient}
	if s.Endpoint != "" {
		opts.BaseEndpoint = aws.String(s.Endpoint)
	}
	client := dynamodb.New(opts)
	return &Store{client: client, table: s.TableName, prefix: s.Prefix}, nil
}

// Close has nothing to release.
func (st *Store) Close() error { return nil }

func (st *Store) namespace(name string) string {
	if st.prefix == "" {
		return name
	}
	return st.prefix + ":" + name
}

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }
func num(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func key(ns, k string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{partitionKey: str(ns), sortKey: str(k)}
}

// Items queries the namespace of kind.
func (st *Store) Items(ctx context.Context, kind string) (map[string]featurestore.Item, error) {
	out := map[string]featurestore.Item{}
	p := dynamodb.NewQueryPaginator(st.client, &dynamodb.QueryInput{
		TableName: aws.String(st.table), ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("#ns = :ns"),
		ExpressionAttributeNames:  map[string]string{"#ns": partitionKey},
		ExpressionAttributeValues: map[string]types.AttributeValue{":ns": str(st.namespace(kind))},
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("query table %s: %w", st.table, err)
		}
		for _, it := range page.Items {
			k, _ := it[sortKey].(*types.AttributeValueMemberS)
			v, _ := it[versionAttr].(*types.AttributeValueMemberN)
			j, _ := it[itemAttr].(*types.AttributeValueMemberS)
			if k == nil || v == nil || j == nil {
				continue
			}
			n, err := strconv.Atoi(v.Value)
			if err != nil {
				return nil, fmt.Errorf("%s %q: version %q is not a number", kind, k.Value, v.Value)
			}
			out[k.Value] = featurestore.Item{Version: n, JSON: []byte(j.Value)}
		}
	}
	return out, nil
}

// Put writes with the SDK's condition (a higher version), or on expect.
func (st *Store) Put(ctx context.Context, kind, k string, it featurestore.Item, expect int) (bool, error) {
	item := key(st.namespace(kind), k)
	item[versionAttr] = num(int64(it.Version))
	item[itemAttr] = str(string(it.JSON))
	in := &dynamodb.PutItemInput{TableName: aws.String(st.table), Item: item,
		ExpressionAttributeNames: map[string]string{"#ns": partitionKey, "#version": versionAttr}}
	if expect < 0 {
		in.ConditionExpression = aws.String("attribute_not_exists(#ns) or :version > #version")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":version": num(int64(it.Version))}
	} else {
		in.ConditionExpression = aws.String("attribute_exists(#ns) and #version = :expect")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":expect": num(int64(expect))}
	}
	return conditional(st.client.PutItem(ctx, in))
}

// Delete removes the item when its version is expect.
func (st *Store) Delete(ctx context.Context, kind, k string, expect int) (bool, error) {
	return conditional(st.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(st.table), Key: key(st.namespace(kind), k),
		ConditionExpression:       aws.String("#version = :expect"),
		ExpressionAttributeNames:  map[string]string{"#version": versionAttr},
		ExpressionAttributeValues: map[string]types.AttributeValue{":expect": num(int64(expect))},
	}))
}

func conditional[T any](_ T, err error) (bool, error) {
	var failed *types.ConditionalCheckFailedException
	if errors.As(err, &failed) {
		return false, nil
	}
	return err == nil, err
}

// MarkInitialized writes the "$inited" item.
func (st *Store) MarkInitialized(ctx context.Context) error {
	ns := st.namespace("$inited")
	_, err := st.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(st.table), Item: key(ns, ns)})
	return err
}

// SetSynchronizedOn writes the big segment metadata item.
func (st *Store) SetSynchronizedOn(ctx context.Context, ms int64) error {
	ns := st.namespace("big_segments_metadata")
	item := key(ns, ns)
	item[syncedAttr] = num(ms)
	_, err := st.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(st.table), Item: item})
	return err
}

// SynchronizedOn reads it; 0 when absent.
func (st *Store) SynchronizedOn(ctx context.Context) (int64, error) {
	ns := st.namespace("big_segments_metadata")
	out, err := st.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.table), Key: key(ns, ns), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return 0, fmt.Errorf("read table %s: %w", st.table, err)
	}
	v, ok := out.Item[syncedAttr].(*types.AttributeValueMemberN)
	if !ok {
		return 0, nil
	}
	return strconv.ParseInt(v.Value, 10, 64)
}

// writers is how many UpdateItem requests WriteMembers has in flight: a
// million members are a million requests (DynamoDB updates no set in a
// batch), so they go side by side.
const writers = 32

// WriteMembers adds ref to, or deletes it from, the string set "included"
// (or "excluded") of each key's item "<prefix>:big_segments_user" /
// <hash>: one UpdateItem per key, the only write that changes a set
// without reading it.
func (st *Store) WriteMembers(ctx context.Context, ref string, included, on bool, contextKeys []string) error {
	attr, op := "excluded", "DELETE"
	if included {
		attr = "included"
	}
	if on {
		op = "ADD"
	}
	ns := st.namespace("big_segments_user")
	expr := aws.String(op + " #s :ref")
	names := map[string]string{"#s": attr}
	values := map[string]types.AttributeValue{":ref": &types.AttributeValueMemberSS{Value: []string{ref}}}
	keys := make(chan string)
	errs := make(chan error, writers)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range writers {
		go func() {
			var first error
			for k := range keys {
				if first != nil {
					continue
				}
				_, err := st.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(st.table),
					Key: key(ns, featurestore.HashContextKey(k)), UpdateExpression: expr,
					ExpressionAttributeNames: names, ExpressionAttributeValues: values})
				if err != nil {
					first = fmt.Errorf("update big segment membership in table %s: %w", st.table, err)
					cancel()
				}
			}
			errs <- first
		}()
	}
	for _, k := range contextKeys {
		if ctx.Err() != nil {
			break
		}
		keys <- k
	}
	close(keys)
	var all []error
	for range writers {
		all = append(all, <-errs)
	}
	return errors.Join(all...)
}

// Probe writes the item "<prefix>:$flagplane_probe", reads it back and
// deletes it.
func (st *Store) Probe(ctx context.Context) error {
	var b [8]byte
	_, _ = rand.Read(b[:])
	want := hex.EncodeToString(b[:])
	ns := st.namespace("$flagplane_probe")
	item := key(ns, ns)
	item[itemAttr] = str(want)
	if _, err := st.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(st.table), Item: item}); err != nil {
		return failedAt(featurestore.StepWrite, fmt.Errorf("write to table %s: %w", st.table, err))
	}
	out, err := st.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.table), Key: key(ns, ns), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return failedAt(featurestore.StepRead, fmt.Errorf("read back from table %s: %w", st.table, err))
	}
	if v, ok := out.Item[itemAttr].(*types.AttributeValueMemberS); !ok || v.Value != want {
		return failedAt(featurestore.StepRead, fmt.Errorf("read back from table %s: the probe item does not hold what was written", st.table))
	}
	if _, err := st.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(st.table), Key: key(ns, ns)}); err != nil {
		return failedAt(featurestore.StepDelete, fmt.Errorf("remove the probe item from table %s: %w", st.table, err))
	}
	return nil
}

// failedAt names the probe step that failed: connect when the request
// never reached the endpoint (Open connects nothing: the first request
// does).
func failedAt(step string, err error) error {
	var op *net.OpError
	var dns *net.DNSError
	if errors.As(err, &op) && op.Op == "dial" || errors.As(err, &dns) {
		step = featurestore.StepConnect
	}
	return &featurestore.StepError{Step: step, Err: err}
}

var _ featurestore.Store = (*Store)(nil)
