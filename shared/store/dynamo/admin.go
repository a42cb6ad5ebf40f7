package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/flagplane/flagplane/shared/store"
)

// ErrTableExists is returned (wrapped) by CreateTable when the table already exists.
var ErrTableExists = errors.New("table already exists")

// tableWait bounds how long CreateTable and DeleteTable wait for the table's
// status to settle; DynamoDB usually needs seconds, DynamoDB Local none.
const tableWait = 5 * time.Minute

// TableInput is the definition of the flagplane table: string keys PK and
// SK, the index GSI1 over GSI1PK and GSI1SK projecting all attributes,
// on-demand billing and a stream of new keys. The production stack must create exactly this table.
func TableInput(name string) *dynamodb.CreateTableInput {
	s := types.ScalarAttributeTypeS
	return &dynamodb.CreateTableInput{
		TableName: aws.String(name),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(store.AttrPK), AttributeType: s},
			{AttributeName: aws.String(store.AttrSK), AttributeType: s},
			{AttributeName: aws.String(store.AttrGSI1PK), AttributeType: s},
			{AttributeName: aws.String(store.AttrGSI1SK), AttributeType: s},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(store.AttrPK), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(store.AttrSK), KeyType: types.KeyTypeRange},
		},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName: aws.String(store.IndexGSI1),
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String(store.AttrGSI1PK), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String(store.AttrGSI1SK), KeyType: types.KeyTypeRange},
			},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}},
		BillingMode: types.BillingModePayPerRequest,
		// The stream is the outbox in AWS: the audit-stream function hands
		// every new audit entry on from it. The keys are enough.
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeKeysOnly},
	}
}

// CreateTable creates the flagplane table (see TableInput), waits until it is
// ACTIVE and enables expiry on the ttl attribute. An existing table is left
// alone and reported with an error wrapping ErrTableExists.
func CreateTable(ctx context.Context, client *dynamodb.Client, name string) error {
	if _, err := client.CreateTable(ctx, TableInput(name)); err != nil {
		var inUse *types.ResourceInUseException
		if errors.As(err, &inUse) {
			return fmt.Errorf("dynamo: create table %s: %w", name, ErrTableExists)
		}
		return fmt.Errorf("dynamo: create table %s: %w", name, err)
	}
	waiter := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay, o.MaxDelay = time.Second, 5*time.Second
	})
	// TableExists waits for status ACTIVE; an index created with its table is
	// active no later than the table.
	if err := waiter.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, tableWait); err != nil {
		return fmt.Errorf("dynamo: wait for table %s to be active: %w", name, err)
	}
	_, err := client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(name),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(store.AttrTTL),
			Enabled:       aws.Bool(true),
		},
	})
	if err != nil && !ttlAlreadyEnabled(err) {
		return fmt.Errorf("dynamo: enable expiry on %s.%s: %w", name, store.AttrTTL, err)
	}
	return nil
}

// ttlAlreadyEnabled reports DynamoDB's refusal to enable TTL twice, which
// only means the work is done.
func ttlAlreadyEnabled(err error) bool {
	var apiErr smithy.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode() == "ValidationException" &&
		strings.Contains(strings.ToLower(apiErr.ErrorMessage()), "already enabled")
}

// DeleteTable deletes the table and waits until it is gone. A table that
// does not exist is not an error, so cleanup can run unconditionally.
func DeleteTable(ctx context.Context, client *dynamodb.Client, name string) error {
	_, err := client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	var notFound *types.ResourceNotFoundException
	if errors.As(err, &notFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("dynamo: delete table %s: %w", name, err)
	}
	waiter := dynamodb.NewTableNotExistsWaiter(client, func(o *dynamodb.TableNotExistsWaiterOptions) {
		o.MinDelay, o.MaxDelay = time.Second, 5*time.Second
	})
	if err := waiter.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, tableWait); err != nil {
		return fmt.Errorf("dynamo: wait for table %s to be deleted: %w", name, err)
	}
	return nil
}
