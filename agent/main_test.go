package agent_test

import (
	"os"
	"testing"

	"github.com/baton-dev/baton/store/storetest"
)

// TestMain stops the PostgreSQL server that storetest shares between the
// tests and benchmarks that open PostgreSQL databases.
func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }
