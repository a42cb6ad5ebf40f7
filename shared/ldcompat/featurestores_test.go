package ldcompat_test

import (
	"net/http"

	ldapi "github.com/launchdarkly/api-client-go/v17"
)

// The delivery-configurations and big-segments groups (registered from
// shared/featurestore/featurestoreapi) in the tier: a Redis delivery
// configuration and a Redis big segment store integration made, read,
// listed, patched, validated and deleted through LaunchDarkly's
// IntegrationDeliveryConfigurationsBetaApi and
// PersistentStoreIntegrationsBetaApi. The Redis named is at 127.0.0.1:1,
// where nothing listens: validate answers what failed, and the big segment
// store's status reports the failed check.

const bigSegmentTimes = "spec 2.20: a big segment store's _status.lastSync and lastError are Unix ms as JSON strings; LaunchDarkly's BigSegmentStoreStatus has int64"

var (
	deliveryOps   = []string{"createIntegrationDeliveryConfiguration", "getIntegrationDeliveryConfigurations", "getIntegrationDeliveryConfigurationByEnvironment", "getIntegrationDeliveryConfigurationById", "patchIntegrationDeliveryConfiguration", "validateIntegrationDeliveryConfiguration", "deleteIntegrationDeliveryConfiguration"}
	bigSegmentOps = []string{"createBigSegmentStoreIntegration", "getBigSegmentStoreIntegrations", "getBigSegmentStoreIntegration", "patchBigSegmentStoreIntegration", "deleteBigSegmentStoreIntegration"}
)

func init() {
	groupSteps = append(groupSteps, featureStoreSteps)
	one := []string{"createBigSegmentStoreIntegration", "getBigSegmentStoreIntegration", "patchBigSegmentStoreIntegration"}
	deviations = append(deviations,
		deviation{one, "_status.lastError", bigSegmentTimes},
		deviation{[]string{"getBigSegmentStoreIntegrations"}, "items[]._status.lastError", bigSegmentTimes},
	)
}

func featureStoreSteps(tr *tier) {
	for _, op := range append(append([]string{}, deliveryOps...), bigSegmentOps...) {
		tr.built[op] = true
	}
	tr.srv.MustCreateProject(tr.t, "fsld")
	ctx := tr.ctx
	post := ldapi.IntegrationDeliveryConfigurationPost{
		Name: ptr("Redis cache"), On: ptr(false), Tags: []string{"ops"},
		Config: map[string]any{"host": "127.0.0.1", "port": 1, "password": "s3cret", "prefix": "ld"},
	}

	fs := tr.ld.IntegrationDeliveryConfigurationsBetaApi
	c := check(tr, "createIntegrationDeliveryConfiguration", "create a Redis delivery configuration", http.StatusCreated,
		fs.CreateIntegrationDeliveryConfiguration(ctx, "fsld", "test", "redis").IntegrationDeliveryConfigurationPost(post).Execute)
	if c == nil || c.Id == "" {
		tr.note("the other delivery configuration calls skipped: the create gave no id")
	} else {
		check(tr, "getIntegrationDeliveryConfigurations", "list all", http.StatusOK, fs.GetIntegrationDeliveryConfigurations(ctx).Execute)
		check(tr, "getIntegrationDeliveryConfigurationByEnvironment", "list fsld/test", http.StatusOK, fs.GetIntegrationDeliveryConfigurationByEnvironment(ctx, "fsld", "test").Execute)
		check(tr, "getIntegrationDeliveryConfigurationById", "get", http.StatusOK, fs.GetIntegrationDeliveryConfigurationById(ctx, "fsld", "test", "redis", c.Id).Execute)
		check(tr, "patchIntegrationDeliveryConfiguration", "rename and change the prefix", http.StatusOK,
			fs.PatchIntegrationDeliveryConfiguration(ctx, "fsld", "test", "redis", c.Id).PatchOperation([]ldapi.PatchOperation{
				replace("/name", "Redis EU"), replace("/config/prefix", "ld-eu"),
			}).Execute)
		v := check(tr, "validateIntegrationDeliveryConfiguration", "validate (nothing listens)", http.StatusOK,
			fs.ValidateIntegrationDeliveryConfiguration(ctx, "fsld", "test", "redis", c.Id).Execute)
		if v != nil && (v.StatusCode == nil || *v.StatusCode == http.StatusOK) {
			tr.t.Errorf("validate of a Redis where nothing listens answered %+v, want a failed status code", v)
		}
		checkEmpty(tr, "deleteIntegrationDeliveryConfiguration", "delete", http.StatusNoContent,
			fs.DeleteIntegrationDeliveryConfiguration(ctx, "fsld", "test", "redis", c.Id).Execute)
	}

	bs := tr.ld.PersistentStoreIntegrationsBetaApi
	b := check(tr, "createBigSegmentStoreIntegration", "create a Redis big segment store", http.StatusCreated,
		bs.CreateBigSegmentStoreIntegration(ctx, "fsld", "test", "redis").IntegrationDeliveryConfigurationPost(post).Execute)
	if b == nil || b.Id == "" {
		tr.note("the other big segment store calls skipped: the create gave no id")
		return
	}
	check(tr, "getBigSegmentStoreIntegrations", "list", http.StatusOK, bs.GetBigSegmentStoreIntegrations(ctx).Execute)
	check(tr, "getBigSegmentStoreIntegration", "get", http.StatusOK, bs.GetBigSegmentStoreIntegration(ctx, "fsld", "test", "redis", b.Id).Execute)
	check(tr, "patchBigSegmentStoreIntegration", "turn on", http.StatusOK,
		bs.PatchBigSegmentStoreIntegration(ctx, "fsld", "test", "redis", b.Id).PatchOperation([]ldapi.PatchOperation{replace("/on", true)}).Execute)
	checkEmpty(tr, "deleteBigSegmentStoreIntegration", "delete", http.StatusNoContent,
		bs.DeleteBigSegmentStoreIntegration(ctx, "fsld", "test", "redis", b.Id).Execute)
}
