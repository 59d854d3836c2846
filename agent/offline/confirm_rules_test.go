package offline

import "testing"

// TestAssistantConfirmsUserProposal checks that a user's question that
// proposes what to do ("should we also …?", "cluster by tenant_id?") is a
// decision when the assistant's reply opens by agreeing, and not when it
// disagrees or when the question asks how things are.
func TestAssistantConfirmsUserProposal(t *testing.T) {
	x := extractT(t,
		u("Our public API has no rate limit."),
		a("A token bucket per API key in Redis is the usual way."),
		u("should we also return a Retry-After header on 429s?"),
		a("Yes — clients can back off correctly then."),
	)
	checkDecisions(t, x, [][]string{{"Return a Retry-After header on 429s"}}, nil)

	x = extractT(t,
		u("The events table is slow to query per tenant."),
		a("Make it a partitioned table by month."),
		u("monthly. shard by tenant_id and event_type?"),
		a("Good idea, most queries filter on both."),
	)
	checkDecisions(t, x, [][]string{{"Shard by tenant_id and event_type"}}, nil)

	for _, reply := range []string{
		"No — clients ignore it anyway, and it costs a Redis round trip.",
		"It depends on the clients you have.",
	} {
		x = extractT(t,
			u("Our public API has no rate limit."),
			a("A token bucket per API key in Redis is the usual way."),
			u("should we also return a Retry-After header on 429s?"),
			a(reply),
		)
		checkDecisions(t, x, nil, [][]string{{"Retry-After"}})
	}

	x = extractT(t,
		u("We moved the cache to Redis."),
		a("That removes the per-pod copies."),
		u("should we expect higher latency on cache hits?"),
		a("Yes, about a millisecond per hit over the network."),
	)
	checkDecisions(t, x, nil, [][]string{{"latency"}})
}
