package agent

import (
	"strings"

	"github.com/baton-dev/baton/store"
)

// MaxBrainstormHistory is how many recent messages a brainstorm reply sees.
const MaxBrainstormHistory = 50

const brainstormSystem = `You are Baton's brainstorming partner for a software team planning a change.
Help them explore options, name trade-offs and risks, and reach clear decisions.
When something sounds decided, say so plainly so it can be pinned. Mention the files
the work touches by path in code spans. Ask one question at a time that moves the plan on.
Keep replies short and concrete; use markdown.`

// BrainstormRequest builds the model request for the next brainstorm reply.
// history is the conversation so far, oldest first, ending with the user's
// message; memory, when not empty, is the workspace's memory section.
func BrainstormRequest(history []Message, memory string) Request {
	if len(history) > MaxBrainstormHistory {
		history = history[len(history)-MaxBrainstormHistory:]
	}
	// Models expect the conversation to open with the user.
	for len(history) > 0 && history[0].Role != RoleUser {
		history = history[1:]
	}
	var sys strings.Builder
	sys.WriteString(brainstormSystem)
	if memory != "" {
		sys.WriteString("\n\n")
		sys.WriteString(memory)
	}
	return Request{System: sys.String(), Messages: history, MaxTokens: 2048}
}

// BrainstormHistory turns a thread's stored messages, oldest first, into
// the conversation the reply to message upTo answers: it ends with upTo,
// and failed messages and empty replies are left out.
func BrainstormHistory(msgs []*store.Message, upTo string) []Message {
	var out []Message
	for _, m := range msgs {
		if m.Status == store.StatusFailed || (m.Role == store.RoleAssistant && m.Content == "") {
			continue
		}
		out = append(out, Text(Role(m.Role), m.Content))
		if m.ID == upTo {
			break
		}
	}
	return out
}

// brainstormQueryMessages is how many of the latest messages memory is
// ranked against for a brainstorm reply.
const brainstormQueryMessages = 6

// BrainstormQuery is what workspace memory is ranked against for the next
// reply of history: the text of its latest messages.
func BrainstormQuery(history []Message) string {
	var b strings.Builder
	for _, m := range history[max(0, len(history)-brainstormQueryMessages):] {
		for _, p := range m.Parts {
			if t, ok := p.(TextPart); ok {
				b.WriteString(t.Text)
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}
