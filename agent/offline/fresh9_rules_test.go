package offline

import (
	"testing"

	"github.com/baton-dev/baton/agent"
)

// Rules from the thirteenth session's blind round (own-432..443).

// Files left alone and then only supposed of, a file a plan's item turns
// down in bold, and Slurm batch scripts.
func TestFilesThirteenthRound(t *testing.T) {
	checkPathCases(t, []pathCase{
		{"a file left alone, later only the subject of a condition", []agent.TranscriptMessage{
			u("Loading is in `src/precipbias/io.py`."),
			a("Then the unit conversion moves to `src/precipbias/io.py`."),
			u("`src/precipbias/plotting.py` imports it but that file is Priya's, don't touch it, she'll adapt."),
			a("Fine. If `plotting.py` relied on getting mm/day out of it, she has to load data through `io.py`."),
		}, []string{"src/precipbias/io.py"}, []string{"src/precipbias/plotting.py"}},
		{"a condition does not turn a file down", []agent.TranscriptMessage{
			u("where does the cache go?"),
			a("In `src/cache.py`. If `src/settings.py` has no TTL yet, add `CACHE_TTL` there."),
		}, []string{"src/cache.py", "src/settings.py"}, nil},
		{"a plan's bold item turns a file down", []agent.TranscriptMessage{
			u("plan?"),
			a("The role goes in a new `terraform/vault/database.tf`, the job in `jobs/reports.nomad.hcl`."),
			u("pgbouncer can't take dynamic users. KV then"),
			a("KV then. Changes vs. the previous plan:\n- **No `terraform/vault/database.tf`**: drop the role entirely.\n- `jobs/reports.nomad.hcl` reads `kv/data/reports/db`."),
		}, []string{"jobs/reports.nomad.hcl"}, []string{"terraform/vault/database.tf"}},
		{"a Slurm batch script at the root", []agent.TranscriptMessage{
			u("how does the controller run?"),
			a("As its own job: `run_pipeline.sbatch` in the repo root replaces `run_cluster.sh`."),
		}, []string{"run_pipeline.sbatch"}, nil},
	})
}

// "I was going to say zarr because …, but …": a first thought the user
// gives up is no decision.
func TestFirstThoughtGivenUp(t *testing.T) {
	x := extractT(t, u("How should the regridding run?"),
		a("Two ways:\n1. A dask-jobqueue SLURMCluster that submits workers as jobs.\n2. A Slurm job array, one task per model.\n\nOutput as zarr or NetCDF?"),
		u("ok 1 then. output: I was going to say zarr because everyone says zarr, but the downstream people use NCL, so it has to be netcdf."))
	checkDecisions(t, x, [][]string{{"SLURMCluster"}}, [][]string{{"zarr"}})
}

// An option picked by its label and later refused by its words, even
// shortened ("db" for "database"), is taken back.
func TestPickTakenBackByItsWords(t *testing.T) {
	offer := a("DB credentials, two ways:\n- (a) **Vault database secrets engine**: Vault creates a throwaway Postgres user per run.\n- (b) **KV v2**: a static user stored in Vault KV.")
	for _, refusal := range []string{"so no database secrets engine.", "so no db secrets engine."} {
		x := extractT(t, u("How does the job get its credentials?"), offer, u("a."),
			a("OK, the database engine it is."),
			u("problem: pgbouncer uses auth_file with a fixed user list. "+refusal+" KV then?"),
			a("Yes, KV v2 then."))
		checkDecisions(t, x, nil, [][]string{{"throwaway"}})
	}
}
