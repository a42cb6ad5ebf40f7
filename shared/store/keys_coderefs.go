package store

import (
	"fmt"
	"net/url"
)

// Code references (the code-refs group). A repository item is found by its
// name in lower case (names are case-insensitive, as ld-find-code-refs
// treats them); everything under it (branches, their reference chunks,
// extinctions) lives in a partition named by the repository's id, so a
// repository deleted and created again under the same name starts empty
// even if the old partition's clean-up did not finish.
const (
	codeRepoPrefix   = "CODEREPO#"
	codeRepoSK       = "CODEREPO"
	codeReposIndexPK = "CODEREPOS"
	codeRefsPrefix   = "CODEREFS#"

	codeBranchSK     = "BRANCH#"
	codeBranchRefSK  = "BRANCHREF#"
	codeExtinctionSK = "EXT#"
)

// CodeRepoKey is one code-reference repository, by its lower-case name.
func CodeRepoKey(lowerName string) Key { return Key{PK: codeRepoPrefix + lowerName, SK: codeRepoSK} }

// CodeRepoIndexKeys places a repository in the list of all repositories, by name.
func CodeRepoIndexKeys(lowerName string) (gsi1pk, gsi1sk string) {
	return codeReposIndexPK, lowerName
}

// CodeReposIndexPK is the GSI1 partition listing all repositories.
const CodeReposIndexPK = codeReposIndexPK

// CodeRefsPartition holds the branches and extinctions of the repository with id repoID.
func CodeRefsPartition(repoID string) string { return codeRefsPrefix + repoID }

// Branch names and revisions may hold any character ('#' and '/' among
// them), so they are escaped inside sort keys: one branch's prefix then
// never selects another's.
func codeSeg(s string) string { return url.PathEscape(s) }

// CodeBranchKey is one branch's summary (head, sync time, reference counts).
func CodeBranchKey(repoID, branch string) Key {
	return Key{PK: CodeRefsPartition(repoID), SK: codeBranchSK + codeSeg(branch)}
}

// CodeBranchPrefix selects every branch summary of a repository (and no chunk).
const CodeBranchPrefix = codeBranchSK

// CodeBranchChunkKey is the n-th piece of a branch's references: they are
// split so that no item outgrows DynamoDB's 400 KB.
func CodeBranchChunkKey(repoID, branch string, n int) Key {
	return Key{PK: CodeRefsPartition(repoID), SK: codeBranchRefSK + codeSeg(branch) + fmt.Sprintf("#%04d", n)}
}

// CodeExtinctionKey is one extinction: a flag of a project no longer
// referenced on a branch as of a revision. The same extinction reported
// twice (by the upload and by the scanner's own post) is one item.
func CodeExtinctionKey(repoID, branch, revision, projKey, flagKey string) Key {
	return Key{PK: CodeRefsPartition(repoID), SK: CodeExtinctionPrefix(branch) + codeSeg(revision) + "#" + projKey + "#" + flagKey}
}

// CodeExtinctionPrefix selects the extinctions of one branch.
func CodeExtinctionPrefix(branch string) string { return codeExtinctionSK + codeSeg(branch) + "#" }
