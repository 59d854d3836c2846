package offline

import "testing"

// Rules from the tenth session.

// An option named only as a mix of the others ("Both", "Hybrid") is its
// description, not its name under the list's lead ("Key options: Both").
func TestMixedOptionKeepsItsDescription(t *testing.T) {
	x := extractT(t,
		u("want to move our ansible secrets to sops. CI runs on EC2 with an instance role"),
		a("Key options:\n\n1. **age keys per person.** Free and offline; CI would need an age private key in a CI variable.\n2. **AWS KMS only.** Access follows IAM, but every decrypt needs live AWS credentials.\n3. **Both**: KMS for CI, age for people, in the same `.sops.yaml` rule. Any single recipient can decrypt.\n\nI'd do 3."),
		u("3. yes"),
	)
	checkDecisions(t, x, [][]string{{"KMS for CI", "age for people"}}, [][]string{{"Key options"}})
}
