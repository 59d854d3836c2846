package agent

import "strings"

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
