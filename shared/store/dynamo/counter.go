package dynamo

import (
	"context"
	"maps"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// CallCounter counts the DynamoDB operations a client makes, by name
// ("GetItem", "Query", "Scan", ...), so tests can assert what an API request
// costs. It counts each operation call once, however many times the SDK
// retries it. It is safe for concurrent use.
type CallCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

// NewCallCounter returns a counter at zero.
func NewCallCounter() *CallCounter { return &CallCounter{counts: map[string]int{}} }

// Option installs the counter on a client:
// dynamodb.NewFromConfig(cfg, counter.Option()).
func (c *CallCounter) Option() func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			// The initialize step runs once per operation call, before retries.
			return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("flagplaneCallCounter",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					c.add(middleware.GetOperationName(ctx))
					return next.HandleInitialize(ctx, in)
				}), middleware.Before)
		})
	}
}

func (c *CallCounter) add(op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts[op]++
}

// Counts returns a copy of the counts by operation name.
func (c *CallCounter) Counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.counts)
}

// Total returns the number of operations counted.
func (c *CallCounter) Total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.counts {
		n += v
	}
	return n
}

// Reset sets every count back to zero.
func (c *CallCounter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.counts)
}
