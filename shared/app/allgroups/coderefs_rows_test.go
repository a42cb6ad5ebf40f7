package allgroups_test

// The code-refs group's rows in the cross-cutting tables.

func init() {

	// The matrix's requests name a repository that does not exist (its
	// fixture has none), so only the create can succeed; the others get the
	// lenient check (past authorization, then a 4xx of their own).
	azBodies["postRepository"] = func(f *azFixture) any { return map[string]any{"name": f.unique("repo")} }
	// No timestampTable row: syncTime and time are in no part 2 section of
	// the spec, and the answers test holds them to the reference's integer.

}
