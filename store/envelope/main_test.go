package envelope_test

import (
	"os"
	"testing"

	"github.com/baton-dev/baton/store/storetest"
)

// TestMain stops the PostgreSQL server that storetest.MustOpen starts under
// BATON_TEST_DB=postgres once the tests end.
func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }
