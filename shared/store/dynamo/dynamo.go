// Package dynamo is the DynamoDB backend of store.Table: one table, the
// single-table layout of package store, one DynamoDB call per store call.
//
// Every method maps to exactly one request (GetItem, PutItem, DeleteItem,
// Query or TransactWriteItems), so the cost of an API request can be read
// off the store calls it makes; the only exception is the first cursor
// encoded or decoded by a Table without Options.CursorSecret, which reads
// (and at most once per table ever, creates) the shared cursor secret.
// Scan is never used.
package dynamo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/flagplane/flagplane/shared/store"
)

// Options configures a Table.
type Options struct {
	// CursorSecret signs query cursors (at least 16 bytes). When nil, the
	// secret is read from the table item store.MetaKey("cursor-secret") the
	// first time a cursor is needed, and created there if absent, so every
	// instance sharing the table accepts the others' cursors without an
	// extra call at cold start.
	CursorSecret []byte
}

// Table is a store.Table backed by one DynamoDB table.
type Table struct {
	client *dynamodb.Client
	name   *string

	// mu guards cursors and is held during the lazy load, so concurrent first
	// queries of one instance wait for a single load; a failed load leaves
	// cursors nil and the next call retries.
	mu      sync.Mutex
	cursors *store.Cursors

	inflated inflateCache
}

var _ store.Table = (*Table)(nil)

// New returns the store.Table for the DynamoDB table tableName. It makes no call.
func New(client *dynamodb.Client, tableName string, opts Options) (*Table, error) {
	if client == nil {
		return nil, errors.New("dynamo: nil client")
	}
	if tableName == "" {
		return nil, errors.New("dynamo: empty table name")
	}
	t := &Table{client: client, name: aws.String(tableName)}
	if opts.CursorSecret != nil {
		c, err := store.NewCursors(opts.CursorSecret)
		if err != nil {
			return nil, fmt.Errorf("dynamo: %w", err)
		}
		t.cursors = c
	}
	return t, nil
}

// Get returns the item with key k, read consistently.
func (t *Table) Get(ctx context.Context, k store.Key) (store.Item, error) {
	if err := checkKey(k); err != nil {
		return store.Item{}, fmt.Errorf("dynamo: get: %w", err)
	}
	out, err := t.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      t.name,
		Key:            keyAttrs(k),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return store.Item{}, fmt.Errorf("dynamo: get %s/%s: %w", k.PK, k.SK, err)
	}
	if out.Item == nil {
		return store.Item{}, fmt.Errorf("dynamo: get %s/%s: %w", k.PK, k.SK, store.ErrNotFound)
	}
	it, err := itemFromAttrs(out.Item, &t.inflated)
	if err != nil {
		return store.Item{}, fmt.Errorf("dynamo: get %s/%s: %w", k.PK, k.SK, err)
	}
	return it, nil
}

// Put writes it when c holds.
func (t *Table) Put(ctx context.Context, it store.Item, c store.Cond) error {
	if err := checkKey(it.Key()); err != nil {
		return fmt.Errorf("dynamo: put: %w", err)
	}
	in := &dynamodb.PutItemInput{TableName: t.name, Item: itemAttrs(it)}
	cond, err := condition(c)
	if err != nil {
		return fmt.Errorf("dynamo: put %s/%s: %w", it.PK, it.SK, err)
	}
	cond.applyPut(in)
	if _, err := t.client.PutItem(ctx, in); err != nil {
		return writeError("put", it.Key(), c, err)
	}
	return nil
}

// Delete removes the item with key k when c holds; with store.Always a
// missing item is not an error.
func (t *Table) Delete(ctx context.Context, k store.Key, c store.Cond) error {
	if err := checkKey(k); err != nil {
		return fmt.Errorf("dynamo: delete: %w", err)
	}
	in := &dynamodb.DeleteItemInput{TableName: t.name, Key: keyAttrs(k)}
	cond, err := condition(c)
	if err != nil {
		return fmt.Errorf("dynamo: delete %s/%s: %w", k.PK, k.SK, err)
	}
	cond.applyDelete(in)
	if _, err := t.client.DeleteItem(ctx, in); err != nil {
		return writeError("delete", k, c, err)
	}
	return nil
}

// Query returns one page of q with one DynamoDB Query call.
//
// It asks for Limit+1 items so that a cursor is returned only when another
// item really follows. When DynamoDB stops early at its 1 MB response size,
// the cursor continues after the last item returned, even though the next
// page may turn out empty.
func (t *Table) Query(ctx context.Context, q store.Query) (store.Page, error) {
	if err := checkQuery(q); err != nil {
		return store.Page{}, fmt.Errorf("dynamo: query: %w", err)
	}
	if q.SKFrom != "" && q.SKTo != "" && q.SKFrom > q.SKTo {
		// DynamoDB refuses BETWEEN with bounds out of order; the range is
		// simply empty, as store.Query.InRange says.
		return store.Page{Items: []store.Item{}}, nil
	}
	in := queryInput(t.name, q)
	if q.Cursor != "" {
		cursors, err := t.cursorCodec(ctx)
		if err != nil {
			return store.Page{}, fmt.Errorf("dynamo: query %s: %w", q.PK, err)
		}
		last, err := cursors.Decode(q, q.Cursor)
		if err != nil {
			return store.Page{}, fmt.Errorf("dynamo: query %s: %w", q.PK, err)
		}
		start, err := startKey(q, last)
		if err != nil {
			return store.Page{}, fmt.Errorf("dynamo: query %s: %w", q.PK, err)
		}
		in.ExclusiveStartKey = start
	}
	if q.Limit > 0 {
		// One more than asked, to know whether anything follows.
		in.Limit = aws.Int32(int32(min(q.Limit, math.MaxInt32-1) + 1))
	}
	out, err := t.client.Query(ctx, in)
	if err != nil {
		return store.Page{}, fmt.Errorf("dynamo: query %s: %w", describeQuery(q), err)
	}

	page := store.Page{Items: make([]store.Item, 0, len(out.Items))}
	for _, av := range out.Items {
		it, err := itemFromAttrs(av, &t.inflated)
		if err != nil {
			return store.Page{}, fmt.Errorf("dynamo: query %s: %w", describeQuery(q), err)
		}
		page.Items = append(page.Items, it)
	}

	var after *store.Item // the cursor continues after this item
	switch {
	case q.Limit > 0 && len(page.Items) > q.Limit:
		page.Items = page.Items[:q.Limit]
		after = &page.Items[q.Limit-1]
	case out.LastEvaluatedKey == nil:
		// DynamoDB read to the end of the range.
	case len(page.Items) > 0:
		// Stopped at the 1 MB limit (or, with Limit 0, at the page's end).
		after = &page.Items[len(page.Items)-1]
	default:
		// Not expected without a filter, but never drop the position.
		last, err := itemFromKey(out.LastEvaluatedKey)
		if err != nil {
			return store.Page{}, fmt.Errorf("dynamo: query %s: last evaluated key: %w", describeQuery(q), err)
		}
		after = &last
	}
	if after != nil {
		cursors, err := t.cursorCodec(ctx)
		if err != nil {
			return store.Page{}, fmt.Errorf("dynamo: query %s: %w", describeQuery(q), err)
		}
		page.Cursor = cursors.Encode(q, *after)
	}
	return page, nil
}

// Transact applies ws atomically with one TransactWriteItems call.
func (t *Table) Transact(ctx context.Context, ws []store.Write) error {
	if err := store.ValidateWrites(ws); err != nil {
		// Unwrapped: every backend reports these with the same message.
		return err
	}
	items := make([]types.TransactWriteItem, len(ws))
	for i, w := range ws {
		item, err := t.transactItem(w)
		if err != nil {
			return fmt.Errorf("dynamo: transaction write %d (%s/%s): %w", i, w.Item.PK, w.Item.SK, err)
		}
		items[i] = item
	}
	_, err := t.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if err != nil {
		return transactError(ws, err)
	}
	return nil
}

func (t *Table) transactItem(w store.Write) (types.TransactWriteItem, error) {
	cond, err := condition(w.Cond)
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	switch w.Kind {
	case store.OpPut:
		p := &types.Put{TableName: t.name, Item: itemAttrs(w.Item)}
		p.ConditionExpression, p.ExpressionAttributeNames, p.ExpressionAttributeValues = cond.expr, cond.names, cond.values
		return types.TransactWriteItem{Put: p}, nil
	case store.OpDelete:
		d := &types.Delete{TableName: t.name, Key: keyAttrs(w.Item.Key())}
		d.ConditionExpression, d.ExpressionAttributeNames, d.ExpressionAttributeValues = cond.expr, cond.names, cond.values
		return types.TransactWriteItem{Delete: d}, nil
	case store.OpCheck:
		if cond.expr == nil {
			// DynamoDB requires a condition on a ConditionCheck; one that
			// checks nothing is a caller bug, not a no-op to hide.
			return types.TransactWriteItem{}, errors.New("a check needs a condition, not always")
		}
		return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
			TableName:                 t.name,
			Key:                       keyAttrs(w.Item.Key()),
			ConditionExpression:       cond.expr,
			ExpressionAttributeNames:  cond.names,
			ExpressionAttributeValues: cond.values,
		}}, nil
	default:
		return types.TransactWriteItem{}, fmt.Errorf("unknown write kind %d", w.Kind)
	}
}

// writeError maps a PutItem/DeleteItem error.
func writeError(op string, k store.Key, c store.Cond, err error) error {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return fmt.Errorf("dynamo: %s %s/%s (if %s): %w", op, k.PK, k.SK, c, store.ErrConditionFailed)
	}
	return fmt.Errorf("dynamo: %s %s/%s: %w", op, k.PK, k.SK, err)
}

// transactError maps a TransactWriteItems error: a failed condition becomes
// a *store.TxError naming the write; any other cancellation (for example a
// TransactionConflict with a concurrent write) stays a plain error so that
// callers do not report a conflict as a failed precondition.
func transactError(ws []store.Write, err error) error {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return fmt.Errorf("dynamo: transaction of %d writes: %w", len(ws), err)
	}
	for i, r := range tce.CancellationReasons {
		if aws.ToString(r.Code) == "ConditionalCheckFailed" && i < len(ws) {
			return &store.TxError{Index: i, Key: ws[i].Item.Key()}
		}
	}
	codes := make([]string, 0, len(tce.CancellationReasons))
	conflict := false
	for _, r := range tce.CancellationReasons {
		codes = append(codes, aws.ToString(r.Code))
		conflict = conflict || aws.ToString(r.Code) == "TransactionConflict"
	}
	if conflict {
		// Another transaction held one of the items: a concurrent writer, worth a retry.
		return fmt.Errorf("dynamo: transaction of %d writes cancelled, reasons %v: %w: %w", len(ws), codes, store.ErrConflict, err)
	}
	return fmt.Errorf("dynamo: transaction of %d writes cancelled, reasons %v: %w", len(ws), codes, err)
}

// cursorCodec returns the cursor codec, loading the shared secret on first use.
func (t *Table) cursorCodec(ctx context.Context) (*store.Cursors, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cursors != nil {
		return t.cursors, nil
	}
	secret, err := t.loadSecret(ctx)
	if err != nil {
		return nil, fmt.Errorf("cursor secret: %w", err)
	}
	c, err := store.NewCursors(secret)
	if err != nil {
		return nil, fmt.Errorf("cursor secret: %w", err)
	}
	t.cursors = c
	return c, nil
}

func checkKey(k store.Key) error {
	if k.PK == "" || k.SK == "" {
		return fmt.Errorf("key %q/%q: partition and sort key must not be empty", k.PK, k.SK)
	}
	return nil
}

func checkQuery(q store.Query) error {
	switch {
	case q.Index != "" && q.Index != store.IndexGSI1:
		return fmt.Errorf("unknown index %q", q.Index)
	case q.PK == "":
		return errors.New("empty partition key")
	case q.Limit < 0:
		return fmt.Errorf("negative limit %d", q.Limit)
	}
	return nil
}

func describeQuery(q store.Query) string {
	if q.Index != "" {
		return q.Index + " " + q.PK
	}
	return q.PK
}

// queryInput builds the Query request of q without cursor and limit.
func queryInput(table *string, q store.Query) *dynamodb.QueryInput {
	pkName, skName := store.AttrPK, store.AttrSK
	if q.Index != "" {
		pkName, skName = store.AttrGSI1PK, store.AttrGSI1SK
	}
	names := map[string]string{"#pk": pkName}
	values := map[string]types.AttributeValue{":pk": str(q.PK)}
	expr := "#pk = :pk"
	sk := func(cond string) {
		names["#sk"] = skName
		expr += " AND " + cond
	}
	// Bounds win over the prefix, as documented on store.Query.
	switch {
	case q.SKFrom != "" && q.SKTo != "":
		sk("#sk BETWEEN :from AND :to")
		values[":from"], values[":to"] = str(q.SKFrom), str(q.SKTo)
	case q.SKFrom != "":
		sk("#sk >= :from")
		values[":from"] = str(q.SKFrom)
	case q.SKTo != "":
		sk("#sk <= :to")
		values[":to"] = str(q.SKTo)
	case q.SKPrefix != "":
		sk("begins_with(#sk, :prefix)")
		values[":prefix"] = str(q.SKPrefix)
	}
	in := &dynamodb.QueryInput{
		TableName:                 table,
		KeyConditionExpression:    aws.String(expr),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
		ScanIndexForward:          aws.Bool(!q.Descending),
	}
	if q.Index != "" {
		// Global secondary indexes only support eventually consistent reads.
		in.IndexName = aws.String(q.Index)
	} else if !q.Eventual {
		in.ConsistentRead = aws.Bool(true)
	}
	return in
}

// startKey is the ExclusiveStartKey continuing q after last.
func startKey(q store.Query, last store.Item) (map[string]types.AttributeValue, error) {
	k := keyAttrs(last.Key())
	if q.Index == "" {
		if last.PK != q.PK || last.SK == "" {
			return nil, fmt.Errorf("decode cursor: %w", store.ErrBadCursor)
		}
		return k, nil
	}
	if last.GSI1PK != q.PK || last.GSI1SK == "" || last.PK == "" || last.SK == "" {
		return nil, fmt.Errorf("decode cursor: %w", store.ErrBadCursor)
	}
	k[store.AttrGSI1PK] = str(last.GSI1PK)
	k[store.AttrGSI1SK] = str(last.GSI1SK)
	return k, nil
}

// cond is a condition expression ready to attach to a request; expr is nil for Always.
type cond struct {
	expr   *string
	names  map[string]string
	values map[string]types.AttributeValue
}

func condition(c store.Cond) (cond, error) {
	switch c.Kind {
	case store.Always:
		return cond{}, nil
	case store.NotExists:
		return cond{expr: aws.String("attribute_not_exists(#pk)"), names: map[string]string{"#pk": store.AttrPK}}, nil
	case store.Exists:
		return cond{expr: aws.String("attribute_exists(#pk)"), names: map[string]string{"#pk": store.AttrPK}}, nil
	case store.VersionIs:
		// A missing item has no ver attribute, so the comparison is false, as required.
		return cond{
			expr:   aws.String("#ver = :ver"),
			names:  map[string]string{"#ver": store.AttrVersion},
			values: map[string]types.AttributeValue{":ver": num(c.Version)},
		}, nil
	default:
		return cond{}, fmt.Errorf("unknown condition kind %d", c.Kind)
	}
}

func (c cond) applyPut(in *dynamodb.PutItemInput) {
	in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues = c.expr, c.names, c.values
}

func (c cond) applyDelete(in *dynamodb.DeleteItemInput) {
	in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues = c.expr, c.names, c.values
}

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func num(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func keyAttrs(k store.Key) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{store.AttrPK: str(k.PK), store.AttrSK: str(k.SK)}
}

// itemAttrs is the DynamoDB form of it. Empty index keys are left out:
// DynamoDB refuses empty strings in index key attributes, and an item
// lacking either one is simply not in the sparse index.
func itemAttrs(it store.Item) map[string]types.AttributeValue {
	av := keyAttrs(it.Key())
	if it.GSI1PK != "" {
		av[store.AttrGSI1PK] = str(it.GSI1PK)
	}
	if it.GSI1SK != "" {
		av[store.AttrGSI1SK] = str(it.GSI1SK)
	}
	av[store.AttrVersion] = num(it.Version)
	if it.TTL != 0 {
		av[store.AttrTTL] = num(it.TTL)
	}
	if z := deflate(it.Data); z != nil {
		av[attrDataDeflated] = &types.AttributeValueMemberB{Value: z}
		return av
	}
	data := it.Data
	if data == nil {
		data = []byte{}
	}
	av[store.AttrData] = &types.AttributeValueMemberB{Value: data}
	return av
}

// itemFromAttrs reverses itemAttrs; attributes it does not know are ignored.
// Deflated data is inflated through cache (nil: none).
func itemFromAttrs(av map[string]types.AttributeValue, cache *inflateCache) (store.Item, error) {
	it, err := itemFromKey(av)
	if err != nil {
		return store.Item{}, err
	}
	if it.Version, err = numAttr(av, store.AttrVersion); err != nil {
		return store.Item{}, fmt.Errorf("item %s/%s: %w", it.PK, it.SK, err)
	}
	if it.TTL, err = numAttr(av, store.AttrTTL); err != nil {
		return store.Item{}, fmt.Errorf("item %s/%s: %w", it.PK, it.SK, err)
	}
	switch v := av[store.AttrData].(type) {
	case nil:
	case *types.AttributeValueMemberB:
		it.Data = v.Value
	default:
		return store.Item{}, fmt.Errorf("item %s/%s: attribute %s is %T, want binary", it.PK, it.SK, store.AttrData, v)
	}
	switch v := av[attrDataDeflated].(type) {
	case nil:
	case *types.AttributeValueMemberB:
		if it.Data, err = cache.inflate(v.Value); err != nil {
			return store.Item{}, fmt.Errorf("item %s/%s: %w", it.PK, it.SK, err)
		}
	default:
		return store.Item{}, fmt.Errorf("item %s/%s: attribute %s is %T, want binary", it.PK, it.SK, attrDataDeflated, v)
	}
	if it.Data == nil {
		// Always non-nil, however the empty value was stored or decoded.
		it.Data = []byte{}
	}
	return it, nil
}

// itemFromKey reads the key attributes (primary and index) of av.
func itemFromKey(av map[string]types.AttributeValue) (store.Item, error) {
	var it store.Item
	for name, dst := range map[string]*string{
		store.AttrPK: &it.PK, store.AttrSK: &it.SK, store.AttrGSI1PK: &it.GSI1PK, store.AttrGSI1SK: &it.GSI1SK,
	} {
		switch v := av[name].(type) {
		case nil:
		case *types.AttributeValueMemberS:
			*dst = v.Value
		default:
			return store.Item{}, fmt.Errorf("attribute %s is %T, want string", name, v)
		}
	}
	if it.PK == "" || it.SK == "" {
		return store.Item{}, errors.New("item without primary key")
	}
	return it, nil
}

func numAttr(av map[string]types.AttributeValue, name string) (int64, error) {
	switch v := av[name].(type) {
	case nil:
		return 0, nil
	case *types.AttributeValueMemberN:
		n, err := strconv.ParseInt(v.Value, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("attribute %s: %w", name, err)
		}
		return n, nil
	default:
		return 0, fmt.Errorf("attribute %s is %T, want number", name, v)
	}
}
