package store

import (
	"fmt"
	"strconv"
)

// This file is the whole key space of the single table. The infrastructure
// stack imports the attribute and index names from here, so the table it
// creates and the code that reads it cannot disagree.

// Attribute names of every item.
const (
	AttrPK      = "PK"
	AttrSK      = "SK"
	AttrGSI1PK  = "GSI1PK"
	AttrGSI1SK  = "GSI1SK"
	AttrVersion = "ver"
	AttrTTL     = "ttl"
	AttrData    = "data"
)

// IndexGSI1 is the one generic secondary index (GSI1PK, GSI1SK), projecting all attributes.
const IndexGSI1 = "GSI1"

// Partitions and sort-key prefixes. User-chosen keys never contain '#'
// (key validation refuses it), so '#' separates parts safely.
const (
	projectPrefix   = "PROJ#"
	projectSK       = "PROJECT"
	projectsIndexPK = "PROJECTS"

	// EnvironmentSKPrefix starts the sort key of every environment of a
	// project. It extends the project's own sort key, so one Query with
	// ProjectAndEnvironmentsPrefix returns the project followed by its
	// environments.
	EnvironmentSKPrefix = projectSK + "#ENV#"
	// ProjectAndEnvironmentsPrefix selects a project item and its environments.
	ProjectAndEnvironmentsPrefix = projectSK

	// AuditPK is the partition of the audit log; sort keys are entry ids, which sort by time.
	AuditPK = "AUDIT"
	// OutboxPK is the partition of outbox records not yet handed to the queue.
	OutboxPK = "OUTBOX"

	tokenPrefix     = "TOKEN#"
	tokenSK         = "TOKEN"
	tokensIndexPK   = "TOKENS"
	tokenHashPrefix = "TOKENHASH#"
	tokenHashSK     = "TOKENHASH"

	memberPrefix      = "MEMBER#"
	memberSK          = "MEMBER"
	membersIndexPK    = "MEMBERS"
	memberEmailPrefix = "MEMBEREMAIL#"
	memberEmailSK     = "MEMBEREMAIL"

	rolePrefix   = "ROLE#"
	roleSK       = "ROLE"
	rolesIndexPK = "ROLES"
	roleIDPrefix = "ROLEID#"
	roleIDSK     = "ROLEID"

	webhookPrefix   = "WEBHOOK#"
	webhookSK       = "WEBHOOK"
	webhooksIndexPK = "WEBHOOKS"

	teamPrefix   = "TEAM#"
	teamSK       = "TEAM"
	teamsIndexPK = "TEAMS"

	oauthClientPrefix   = "OAUTHCLIENT#"
	oauthClientSK       = "OAUTHCLIENT"
	oauthClientsIndexPK = "OAUTHCLIENTS"

	accountPK = "ACCOUNT"
	metaPK    = "META"
)

// ProjectPartition is the partition holding a project and everything under it.
func ProjectPartition(projectKey string) string { return projectPrefix + projectKey }

// ProjectKey is the project item itself.
func ProjectKey(projectKey string) Key {
	return Key{PK: ProjectPartition(projectKey), SK: projectSK}
}

// ProjectIndexKeys places a project in the list of all projects, ordered by key.
func ProjectIndexKeys(projectKey string) (gsi1pk, gsi1sk string) {
	return projectsIndexPK, projectKey
}

// ProjectsIndexPK is the GSI1 partition listing all projects.
const ProjectsIndexPK = projectsIndexPK

// EnvironmentKey is one environment of a project.
func EnvironmentKey(projectKey, envKey string) Key {
	return Key{PK: ProjectPartition(projectKey), SK: EnvironmentSKPrefix + envKey}
}

// FlagSKPrefix starts the sort key of every flag of a project. It sorts
// before the project's own sort key, so listing environments never reads flags.
const FlagSKPrefix = "FLAG#"

// FlagKey is one flag of a project, holding its targeting in every environment.
func FlagKey(projectKey, flagKey string) Key {
	return Key{PK: ProjectPartition(projectKey), SK: FlagSKPrefix + flagKey}
}

// AuditKey is one audit log entry of an unsharded log (one partition).
func AuditKey(id string) Key { return AuditShardKey(id, 1) }

// MaxAuditShards bounds the audit log's partitions. A shard count is a
// power of two up to it, so the shard of an id under a count is also its
// shard under every smaller count's residue: raising the count keeps every
// entry readable (AuditKeyCandidates), lowering it would hide entries.
const MaxAuditShards = 64

// ValidAuditShards reports whether n is a usable shard count.
func ValidAuditShards(n int) bool { return n >= 1 && n <= MaxAuditShards && n&(n-1) == 0 }

// AuditShardPK is the partition of shard i: shard 0 is the unsharded
// partition AuditPK, so a log that was never sharded stays where it is.
func AuditShardPK(i int) string {
	if i == 0 {
		return AuditPK
	}
	return fmt.Sprintf("%s#%d", AuditPK, i)
}

// AuditShardKey is the entry id in a log of n shards: the shard is read
// from the id's random last two hex digits, so writes spread evenly and a
// reader finds an entry from its id alone.
func AuditShardKey(id string, n int) Key {
	return Key{PK: AuditShardPK(auditShard(id, n)), SK: id}
}

// AuditKeyCandidates are the keys an entry of id may have when the log has
// n shards now and may have had fewer when the entry was written: the
// current shard first.
func AuditKeyCandidates(id string, n int) []Key {
	var keys []Key
	for m := n; m >= 1; m /= 2 {
		// Counts are powers of two, so a shard repeats only right after itself.
		if k := AuditShardKey(id, m); len(keys) == 0 || keys[len(keys)-1] != k {
			keys = append(keys, k)
		}
	}
	return keys
}

func auditShard(id string, n int) int {
	if n <= 1 || len(id) < 2 {
		return 0
	}
	v, err := strconv.ParseUint(id[len(id)-2:], 16, 8)
	if err != nil {
		return 0
	}
	return int(v) % n
}

// OutboxKey is the outbox record of the audit entry id.
func OutboxKey(id string) Key { return Key{PK: OutboxPK, SK: id} }

// TokenKey is one access token, by id.
func TokenKey(id string) Key { return Key{PK: tokenPrefix + id, SK: tokenSK} }

// TokenIndexKeys places a token in the list of all tokens, ordered by id.
func TokenIndexKeys(id string) (gsi1pk, gsi1sk string) { return tokensIndexPK, id }

// TokensIndexPK is the GSI1 partition listing all tokens.
const TokensIndexPK = tokensIndexPK

// TokenHashKey finds a token by the hash of its secret value in one read.
func TokenHashKey(hash string) Key { return Key{PK: tokenHashPrefix + hash, SK: tokenHashSK} }

// MemberKey is one member, by id.
func MemberKey(id string) Key { return Key{PK: memberPrefix + id, SK: memberSK} }

// MemberIndexKeys places a member in the list of all members, ordered by email.
func MemberIndexKeys(email string, id string) (gsi1pk, gsi1sk string) {
	return membersIndexPK, email + "#" + id
}

// MembersIndexPK is the GSI1 partition listing all members.
const MembersIndexPK = membersIndexPK

// MemberEmailKey reserves an email address, so two members never share one.
func MemberEmailKey(email string) Key { return Key{PK: memberEmailPrefix + email, SK: memberEmailSK} }

// RoleKey is one custom role, by key.
func RoleKey(key string) Key { return Key{PK: rolePrefix + key, SK: roleSK} }

// RoleIDKey points from a custom role's _id to its key, so a role named by
// _id (as tokens' customRoleIds name them) is found with consistent reads.
func RoleIDKey(id string) Key { return Key{PK: roleIDPrefix + id, SK: roleIDSK} }

// RoleIndexKeys places a custom role in the list of all roles, ordered by key.
func RoleIndexKeys(key string) (gsi1pk, gsi1sk string) { return rolesIndexPK, key }

// RolesIndexPK is the GSI1 partition listing all custom roles.
const RolesIndexPK = rolesIndexPK

// WebhookKey is one webhook, by id.
func WebhookKey(id string) Key { return Key{PK: webhookPrefix + id, SK: webhookSK} }

// WebhookIndexKeys places a webhook in the list of all webhooks, ordered by id.
func WebhookIndexKeys(id string) (gsi1pk, gsi1sk string) { return webhooksIndexPK, id }

// WebhooksIndexPK is the GSI1 partition listing all webhooks.
const WebhooksIndexPK = webhooksIndexPK

// DeliveryPK is the partition of one webhook's delivery attempts; sort
// keys start with the zero-padded Unix ms time, so they list by time.
func DeliveryPK(webhookID string) string { return "WEBHOOKLOG#" + webhookID }

// TeamKey is one team, by key.
func TeamKey(key string) Key { return Key{PK: teamPrefix + key, SK: teamSK} }

// TeamIndexKeys places a team in the list of all teams, ordered by key.
func TeamIndexKeys(key string) (gsi1pk, gsi1sk string) { return teamsIndexPK, key }

// TeamsIndexPK is the GSI1 partition listing all teams.
const TeamsIndexPK = teamsIndexPK

// OAuthClientKey is one OAuth 2.0 client, by client id.
func OAuthClientKey(id string) Key { return Key{PK: oauthClientPrefix + id, SK: oauthClientSK} }

// OAuthClientIndexKeys places a client in the list of all clients.
func OAuthClientIndexKeys(id string) (gsi1pk, gsi1sk string) { return oauthClientsIndexPK, id }

// OAuthClientsIndexPK is the GSI1 partition listing all OAuth clients.
const OAuthClientsIndexPK = oauthClientsIndexPK

// AccountKey is the account record created at bootstrap.
func AccountKey() Key { return Key{PK: accountPK, SK: accountPK} }

// MetaKey holds service-internal settings such as the cursor secret.
func MetaKey(name string) Key { return Key{PK: metaPK, SK: name} }

// Approval requests: one item each, listed (ordered by id) in one GSI1 partition.
const approvalRequestsIndexPK = "APPROVALREQUESTS"

// ApprovalRequestKey is one approval request, by id.
func ApprovalRequestKey(id string) Key {
	return Key{PK: "APPROVALREQUEST#" + id, SK: "APPROVALREQUEST"}
}

// ApprovalRequestIndexKeys places an approval request in the list of all requests.
func ApprovalRequestIndexKeys(id string) (gsi1pk, gsi1sk string) { return approvalRequestsIndexPK, id }

// ApprovalRequestsIndexPK is the GSI1 partition listing all approval requests.
const ApprovalRequestsIndexPK = approvalRequestsIndexPK

// Expiring targets. Each scheduled removal of a context from a flag's
// individual targets is one item in its project's partition (so deleting
// the project deletes it), sorted by environment, flag, context kind and
// key; GSI1 orders every one of them by due time, so the expiry job reads
// only the due ones. Context keys may hold '#': they come last.
const (
	expiringSKPrefix = "EXPIRE#"
	// ExpiringIndexPK is the GSI1 partition of every scheduled removal, by due time.
	ExpiringIndexPK = "EXPIRING"
)

// ExpiringKey is the scheduled removal of one context from one flag in one environment.
func ExpiringKey(projectKey, envKey, flagKey, kind, contextKey string) Key {
	return Key{PK: ProjectPartition(projectKey), SK: ExpiringEnvPrefix(envKey) + flagKey + "#" + kind + "#" + contextKey}
}

// ExpiringEnvPrefix selects the scheduled removals of one environment (in the project partition).
func ExpiringEnvPrefix(envKey string) string { return expiringSKPrefix + envKey + "#" }

// ExpiringFlagPrefix selects the scheduled removals of one flag in one environment.
func ExpiringFlagPrefix(envKey, flagKey string) string {
	return ExpiringEnvPrefix(envKey) + flagKey + "#"
}

// ExpiringIndexKeys place a scheduled removal in the due-time index.
func ExpiringIndexKeys(dueMs int64, projectKey, envKey, flagKey, kind, contextKey string) (gsi1pk, gsi1sk string) {
	return ExpiringIndexPK, fmt.Sprintf("%013d#%s#%s#%s#%s#%s", dueMs, projectKey, envKey, flagKey, kind, contextKey)
}

// ExpiringDueTo is the inclusive upper GSI1 sort-key bound of removals due at or before nowMs.
func ExpiringDueTo(nowMs int64) string { return fmt.Sprintf("%013d$", nowMs) }

// SDK credentials. Each environment's SDK key, mobile key and client-side
// id (its _id) has one item naming the environment, so an SDK request is
// resolved with two GetItems (credential, then environment) and no scan.
// The key holds the SHA-256 of the secret, never the secret. A credential
// item outlives a reset or a deleted environment harmlessly: the resolver
// checks that the environment still carries the secret.
const credentialSK = "CRED"

// CredentialKey is the credential item of one secret of one kind ("sdk",
// "mob" or "cid"); secretHash is the hex SHA-256 of the secret.
func CredentialKey(kind, secretHash string) Key {
	return Key{PK: "CRED#" + kind + "#" + secretHash, SK: credentialSK}
}

// What SDK events feed (shared/ingest writes, shared/sdkcontext and
// shared/application read). Raw events are never stored: only these
// aggregates. Environments are named by their _id (the client-side id),
// which stays fixed while keys are reset.
const (
	contextPrefix        = "CTX#"
	contextInstanceSK    = "I#"
	contextRefSK         = "R#"
	contextAttrPrefix    = "CTXATTR#"
	contextAttrNameSK    = "N#"
	contextAttrValueSK   = "V#"
	contextKindSK        = "CONTEXTKIND#"
	flagEvalSK           = "FLAGEVAL#"
	applicationPrefix    = "APP#"
	applicationSK        = "APP"
	applicationsIndexPK  = "APPS"
	applicationVersionSK = "APPVER#"
	applicationFlagSK    = "APPFLAG#"
	payloadPrefix        = "PAYLOAD#"
	sdkSeenPK            = "SDKSEEN"
)

// ContextPartition holds an environment's context instances and the
// references from each individual context (kind and key) to them.
func ContextPartition(envID string) string { return contextPrefix + envID }

// ContextInstanceKey is one context instance (a single or multi-kind context), by id.
func ContextInstanceKey(envID, id string) Key {
	return Key{PK: ContextPartition(envID), SK: contextInstanceSK + id}
}

// ContextCountKey counts an environment's context instances, in all and by application.
func ContextCountKey(envID string) Key { return Key{PK: ContextPartition(envID), SK: "COUNT"} }

// ContextInstancePrefix selects every context instance of the partition.
const ContextInstancePrefix = contextInstanceSK

// ContextRefKey says that the individual context kind/key (keyHash is the
// hex SHA-256 of the key, which may hold any character) is part of instance id.
func ContextRefKey(envID, kind, keyHash, id string) Key {
	return Key{PK: ContextPartition(envID), SK: ContextRefPrefix(kind, keyHash) + id}
}

// ContextRefPrefix selects the instances holding one individual context.
func ContextRefPrefix(kind, keyHash string) string { return contextRefSK + kind + "#" + keyHash + "#" }

// ContextAttrPartition holds an environment's index of attribute names and values.
func ContextAttrPartition(envID string) string { return contextAttrPrefix + envID }

// ContextAttrNameKey is one attribute name of one context kind.
func ContextAttrNameKey(envID, kind, name string) Key {
	return Key{PK: ContextAttrPartition(envID), SK: contextAttrNameSK + kind + "#" + name}
}

// ContextAttrNamePrefix selects every attribute name.
const ContextAttrNamePrefix = contextAttrNameSK

// ContextAttrValueKey is one value (JSON-encoded) of the attribute whose
// name hashes to nameHash, in one context kind.
func ContextAttrValueKey(envID, nameHash, kind, value string) Key {
	return Key{PK: ContextAttrPartition(envID), SK: ContextAttrValuePrefix(nameHash) + kind + "#" + value}
}

// ContextAttrValuePrefix selects the values of one attribute, every kind.
func ContextAttrValuePrefix(nameHash string) string { return contextAttrValueSK + nameHash + "#" }

// ContextKindKey is one context kind of a project (in its partition, so it goes with the project).
func ContextKindKey(projectKey, kind string) Key {
	return Key{PK: ProjectPartition(projectKey), SK: contextKindSK + kind}
}

// ContextKindPrefix selects a project's context kinds.
const ContextKindPrefix = contextKindSK

// FlagEvalKey counts one flag's evaluations in one environment in one hour
// (hour is yyyymmddhh, UTC), by variation.
func FlagEvalKey(projectKey, envKey, flagKey, hour string) Key {
	return Key{PK: ProjectPartition(projectKey), SK: FlagEvalPrefix(envKey, flagKey) + hour}
}

// FlagEvalPrefix selects the hourly counters of one flag in one environment.
func FlagEvalPrefix(envKey, flagKey string) string { return flagEvalSK + envKey + "#" + flagKey + "#" }

// ApplicationKey is one application; its versions and the flags it evaluated share its partition.
func ApplicationKey(key string) Key { return Key{PK: applicationPrefix + key, SK: applicationSK} }

// ApplicationIndexKeys place an application in the list of all applications.
func ApplicationIndexKeys(key string) (gsi1pk, gsi1sk string) { return applicationsIndexPK, key }

// ApplicationsIndexPK is the GSI1 partition listing every application.
const ApplicationsIndexPK = applicationsIndexPK

// ApplicationVersionKey is one version of an application.
func ApplicationVersionKey(appKey, version string) Key {
	return Key{PK: applicationPrefix + appKey, SK: applicationVersionSK + version}
}

// ApplicationVersionPrefix selects an application's versions.
const ApplicationVersionPrefix = applicationVersionSK

// ApplicationFlagKey records that an application evaluated a flag of a project.
func ApplicationFlagKey(appKey, projectKey, flagKey string) Key {
	return Key{PK: applicationPrefix + appKey, SK: applicationFlagSK + projectKey + "#" + flagKey}
}

// ApplicationFlagPrefix selects the flags an application evaluated.
const ApplicationFlagPrefix = applicationFlagSK

// ApplicationPartition is the partition of one application.
func ApplicationPartition(key string) string { return applicationPrefix + key }

// Release policies live in their project's partition. The set item's
// version moves with every create and delete, so an order of the policies
// read before one of them can be made conditional on the set as read.
const (
	releasePolicySKPrefix = "RELEASEPOLICY#"
	releasePolicySetSK    = "RELEASEPOLICIES"
)

// ReleasePolicyKey is one release policy of a project.
func ReleasePolicyKey(projectKey, policyKey string) Key {
	return Key{PK: ProjectPartition(projectKey), SK: releasePolicySKPrefix + policyKey}
}

// ReleasePolicyPrefix selects a project's release policies.
const ReleasePolicyPrefix = releasePolicySKPrefix

// ReleasePolicySetKey is the item whose version changes when a project's
// set of release policies does.
func ReleasePolicySetKey(projectKey string) Key {
	return Key{PK: ProjectPartition(projectKey), SK: releasePolicySetSK}
}

// PayloadKey marks one event payload as counted (with a TTL), so a retry counts once.
func PayloadKey(envID, payloadID string) Key {
	return Key{PK: payloadPrefix + envID + "#" + payloadID, SK: "PAYLOAD"}
}

// PayloadStepKey marks one step of applying a payload (its instances,
// values or counters, chunk by chunk) as done, in the payload mark's
// partition: written in the same commit as the step's writes, it makes a
// redelivered or resumed payload skip what already counted.
func PayloadStepKey(envID, payloadID, step string) Key {
	return Key{PK: payloadPrefix + envID + "#" + payloadID, SK: PayloadStepPrefix + step}
}

// PayloadStepPrefix selects the step marks in a payload's partition.
const PayloadStepPrefix = "STEP#"

// IngestInboxPK is the local server's inbox of accepted SDK event
// payloads not yet applied, oldest first by sort key.
const IngestInboxPK = "INGESTINBOX"

// IngestInboxKey is one accepted payload in the inbox: received (Unix
// milliseconds, zero-padded so the sort key orders by it) by environment and payload id.
func IngestInboxKey(receivedAt int64, envID, payloadID string) Key {
	return Key{PK: IngestInboxPK, SK: fmt.Sprintf("%015d#%s#%s", receivedAt, envID, payloadID)}
}

// IngestInboxPartPK holds the parts of inbox payloads too large for one
// item: the head item at IngestInboxKey holds the first part.
const IngestInboxPartPK = "INGESTINBOXPART"

// IngestInboxPartKey is part n (from 1) of the inbox payload whose head is
// at head. Every suffix has the same length, so no payload's part key can
// be another's.
func IngestInboxPartKey(head Key, n int) Key {
	return Key{PK: IngestInboxPartPK, SK: fmt.Sprintf("%s#%03d", head.SK, n)}
}

// SDKSeenKey is one SDK (type, name, version) seen in one environment.
func SDKSeenKey(envID, sdkType, name, version string) Key {
	return Key{PK: sdkSeenPK, SK: envID + "#" + sdkType + "#" + name + "#" + version}
}

// SDKSeenPK is the partition of every SDK seen.
const SDKSeenPK = sdkSeenPK

// Adaptive triggers: one item each, listed (ordered by id) in one GSI1
// partition per environment; each fired alert event is an item with a TTL.
const adaptiveTriggerPrefix = "ADAPTIVETRIGGER#"

// AdaptiveTriggerKey is one adaptive trigger, by id.
func AdaptiveTriggerKey(id string) Key {
	return Key{PK: adaptiveTriggerPrefix + id, SK: "ADAPTIVETRIGGER"}
}

// AdaptiveTriggerIndexKeys places a trigger in the list of its environment's triggers.
func AdaptiveTriggerIndexKeys(projectKey, envKey, id string) (gsi1pk, gsi1sk string) {
	return "ADAPTIVETRIGGERS#" + projectKey + "#" + envKey, id
}

// AdaptiveTriggerEventKey is one alert event a trigger has fired for.
func AdaptiveTriggerEventKey(id, eventID string) Key {
	return Key{PK: adaptiveTriggerPrefix + id, SK: "EVENT#" + eventID}
}

// AI Configs, their variation versions and model configs live in their
// project's partition, so deleting a project removes them with it.
const (
	aiConfigSKPrefix    = "AICONFIG#"
	aiVariationSKPrefix = "AIVAR#"
	aiModelSKPrefix     = "AIMODEL#"
)

// AIConfigKey is one AI Config of a project.
func AIConfigKey(projectKey, configKey string) Key {
	return Key{PK: ProjectPartition(projectKey), SK: aiConfigSKPrefix + configKey}
}

// AIConfigPrefix selects a project's AI Configs.
const AIConfigPrefix = aiConfigSKPrefix

// AIVariationVersionKey is one version of a variation of an AI Config;
// versions are zero-padded, so a descending query reads the latest first.
func AIVariationVersionKey(projectKey, configKey, variationKey string, version int64) Key {
	return Key{PK: ProjectPartition(projectKey), SK: fmt.Sprintf("%s%010d", AIVariationPrefix(configKey, variationKey), version)}
}

// AIVariationPrefix selects every version of one variation.
func AIVariationPrefix(configKey, variationKey string) string {
	return aiVariationSKPrefix + configKey + "#" + variationKey + "#"
}

// AIConfigVariationsPrefix selects every version of every variation of an AI Config.
func AIConfigVariationsPrefix(configKey string) string { return aiVariationSKPrefix + configKey + "#" }

// AIVariationsPrefix selects every variation version of a project.
const AIVariationsPrefix = aiVariationSKPrefix

// AIModelConfigKey is one AI model config of a project.
func AIModelConfigKey(projectKey, modelKey string) Key {
	return Key{PK: ProjectPartition(projectKey), SK: aiModelSKPrefix + modelKey}
}

// AIModelConfigPrefix selects a project's AI model configs.
const AIModelConfigPrefix = aiModelSKPrefix

// Release pipelines, their per-project count and the flags' releases live in
// the project partition (so a project delete removes them).
const (
	releasePipelineSKPrefix = "RELPIPE#"
	releasePipelineCountSK  = "RELPIPECOUNT"
	releaseSKPrefix         = "RELEASE#"
)

// ReleasePipelineKey is one release pipeline of a project.
func ReleasePipelineKey(projectKey, pipelineKey string) Key {
	return Key{PK: ProjectPartition(projectKey), SK: releasePipelineSKPrefix + pipelineKey}
}

// ReleasePipelineSKPrefix selects every release pipeline of a project partition.
const ReleasePipelineSKPrefix = releasePipelineSKPrefix

// ReleasePipelineCountKey is the project's pipeline count, written with every
// pipeline create and delete under a version condition.
func ReleasePipelineCountKey(projectKey string) Key {
	return Key{PK: ProjectPartition(projectKey), SK: releasePipelineCountSK}
}

// ReleaseKey is a flag's release (the flag's place in a release pipeline).
func ReleaseKey(projectKey, flagKey string) Key {
	return Key{PK: ProjectPartition(projectKey), SK: releaseSKPrefix + flagKey}
}

// ReleaseSKPrefix selects every flag release of a project partition.
const ReleaseSKPrefix = releaseSKPrefix
