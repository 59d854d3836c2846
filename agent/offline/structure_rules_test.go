package offline

import "testing"

// Tests for the structural decision rules of issue 13: rules about how
// a reply is laid out and how a user answers it, not about any topic.

// TestSingleLetterAnswerPicksOption checks that a reply of one letter
// ("b.") picks the lettered option of that label.
func TestSingleLetterAnswerPicksOption(t *testing.T) {
	x := extractT(t,
		u("The nightly report times out. What now?"),
		a("Two choices:\n- (a) split the report query into one query per region and merge the results\n- (b) move the report to a read replica with a longer statement timeout"),
		u("b. the replica is idle at night anyway."),
	)
	checkDecisions(t, x, [][]string{{"read replica"}}, [][]string{{"per region"}})
}
