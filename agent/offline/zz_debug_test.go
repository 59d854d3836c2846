package offline

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/baton-dev/baton/agent"
)

func TestZZDebug(t *testing.T) {
	path := os.Getenv("CASE")
	if path == "" {
		t.Skip()
	}
	var c struct{ Messages []agent.TranscriptMessage }
	b, _ := os.ReadFile(path)
	json.Unmarshal(b, &c)
	tr := newTranscript(c.Messages)
	for i, m := range c.Messages {
		if m.Role == agent.RoleAssistant {
			for _, p := range tr.assistantProposals(i) {
				fmt.Printf("  P%d item=%d label=%q opt=%v pathy=%v title=%v | %s\n", i, p.item, p.label, p.option, p.pathy, keys(p.title), p.text)
			}
			continue
		}
		prev := previousAssistant(tr, i)
		props := tr.assistantProposals(prev)
		for _, s := range tr.sents[i] {
			for _, cl := range userClauses(s.plain) {
				lc := strings.ToLower(cl)
				fmt.Printf("U%d %q q=%v rej=%v picks=%v echo=%d pure=%v fact=%v\n", i, cl, isQuestion(lc), isRejection(lc), optionPicks(lc, props), echoPick(tr, lc, props), isPureAcceptance(lc), isFact(lc))
			}
		}
	}
}

func keys(s tokenSet) []string {
	var out []string
	for k := range s {
		out = append(out, k)
	}
	return out
}
