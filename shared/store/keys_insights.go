package store

import "fmt"

// Engineering insights (shared/insight): deployments, insight groups and the
// mappings of code-reference repositories to projects. Deployments are
// global items (a deployment id is all a read names) listed by time in one
// GSI1 partition per project and environment.
const (
	deploymentPrefix       = "DEPLOYMENT#"
	deploymentsIndexPrefix = "DEPLOYMENTS#"
	deploymentActivePrefix = "DEPLOYACTIVE#"
	insightGroupPrefix     = "INSIGHTGROUP#"
	insightGroupsIndexPK   = "INSIGHTGROUPS"
	insightRepoPrefix      = "INSIGHTREPO#"
	insightReposIndexPK    = "INSIGHTREPOS"
)

// DeploymentKey is one deployment, by id.
func DeploymentKey(id string) Key { return Key{PK: deploymentPrefix + id, SK: "DEPLOYMENT"} }

// DeploymentIndexKeys place a deployment in its environment's list, by start time.
func DeploymentIndexKeys(projectKey, envKey string, startedAt int64, id string) (gsi1pk, gsi1sk string) {
	return DeploymentsIndexPK(projectKey, envKey), fmt.Sprintf("%013d#%s", startedAt, id)
}

// DeploymentsIndexPK is the GSI1 partition listing an environment's deployments.
func DeploymentsIndexPK(projectKey, envKey string) string {
	return deploymentsIndexPrefix + projectKey + "#" + envKey
}

// DeploymentTimeBound is a GSI1 sort-key bound at Unix ms t: "#" sorts
// before every id character and "$" after, so [t#, t$] covers all of t.
func DeploymentTimeBound(t int64, upper bool) string {
	if upper {
		return fmt.Sprintf("%013d$", t)
	}
	return fmt.Sprintf("%013d#", t)
}

// DeploymentActiveKey names the active (last finished) deployment of one
// application in one environment; it moves with each finish.
func DeploymentActiveKey(projectKey, envKey, appKey string) Key {
	return Key{PK: deploymentActivePrefix + projectKey + "#" + envKey + "#" + appKey, SK: "ACTIVE"}
}

// InsightGroupKey is one insight group, by key.
func InsightGroupKey(key string) Key { return Key{PK: insightGroupPrefix + key, SK: "INSIGHTGROUP"} }

// InsightGroupIndexKeys place an insight group in the list of all groups.
func InsightGroupIndexKeys(key string) (gsi1pk, gsi1sk string) { return insightGroupsIndexPK, key }

// InsightGroupsIndexPK is the GSI1 partition listing every insight group.
const InsightGroupsIndexPK = insightGroupsIndexPK

// InsightRepoProjectKey says that a repository's code belongs to a project.
func InsightRepoProjectKey(repoKey, projectKey string) Key {
	return Key{PK: insightRepoPrefix + repoKey, SK: "PROJ#" + projectKey}
}

// InsightRepoProjectIndexKeys list every mapping in one GSI1 partition, by repository then project.
func InsightRepoProjectIndexKeys(repoKey, projectKey string) (gsi1pk, gsi1sk string) {
	return insightReposIndexPK, repoKey + "#" + projectKey
}

// InsightReposIndexPK is the GSI1 partition of every repository-project mapping.
const InsightReposIndexPK = insightReposIndexPK
