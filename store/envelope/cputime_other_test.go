//go:build !unix

package envelope_test

import "time"

// processCPU is not measured here: benchmarks report wall time only.
func processCPU() time.Duration { return 0 }
