package ldcompat_test

import (
	"net/http"

	ldapi "github.com/launchdarkly/api-client-go/v17"
)

// The destinations group (registered from shared/destination/destinationapi)
// in the tier: a key pair generated and a Snowflake destination made with
// its public key, read, listed, turned off and deleted through
// LaunchDarkly's DataExportDestinationsApi.

var destinationOps = []string{"postGenerateWarehouseDestinationKeyPair", "postDestination", "getDestinations", "getDestination", "patchDestination", "deleteDestination"}

func init() {
	groupSteps = append(groupSteps, destinationSteps)
	const notInV17 = "not in api-client-go v17 (newer than it); driven over HTTP by the tests of shared/destination/destinationapi"
	for _, op := range []string{"postGenerateProjectEnvWarehouseDestinationKeyPair", "postGenerateTrustPolicy",
		"postGenerateWarehouseDestinationSetupScript", "postCompleteWarehouseDestinationSetup"} {
		notInClient[op] = notInV17
	}
}

func destinationSteps(tr *tier) {
	for _, op := range destinationOps {
		tr.built[op] = true
	}
	const project = "ld-destinations"
	tr.srv.MustCreateProject(tr.t, project)
	api, ctx := tr.ld.DataExportDestinationsApi, tr.ctx
	pair := check(tr, "postGenerateWarehouseDestinationKeyPair", "a Snowflake key pair", http.StatusCreated, api.PostGenerateWarehouseDestinationKeyPair(ctx).Execute)
	if pair == nil || pair.PublicKeyPkcs8 == nil {
		tr.note("postDestination, getDestination, patchDestination, deleteDestination skipped: no key pair")
		return
	}
	d := check(tr, "postDestination", "a Snowflake destination with the key", http.StatusCreated, api.PostDestination(ctx, project, "production").DestinationPost(ldapi.DestinationPost{
		Name: ptr("Snowflake"), Kind: ptr("snowflake-v2"), On: ptr(true),
		Config: map[string]any{"publicKey": *pair.PublicKey, "snowflakeHostAddress": "ab12345.us-east-1.snowflakecomputing.com"},
	}).Execute)
	check(tr, "getDestinations", "list", http.StatusOK, api.GetDestinations(ctx).Execute)
	if d == nil || d.Id == nil {
		tr.note("getDestination, patchDestination, deleteDestination skipped: the create gave no id")
		return
	}
	check(tr, "getDestination", "get", http.StatusOK, api.GetDestination(ctx, project, "production", *d.Id).Execute)
	check(tr, "patchDestination", "turn off and rename", http.StatusOK, api.PatchDestination(ctx, project, "production", *d.Id).PatchOperation([]ldapi.PatchOperation{
		replace("/on", false), replace("/name", "Snowflake (paused)"),
	}).Execute)
	checkEmpty(tr, "deleteDestination", "delete", http.StatusNoContent, api.DeleteDestination(ctx, project, "production", *d.Id).Execute)
}
