// Package testmatrices finds the shared SPD test matrices (Matrix Market
// files) that tests of several packages solve or factor.
package testmatrices

import "os"

// Dir returns the folder of the shared test matrices: $FSAI_MATRICES, or
// shared/matrices beside or above the repository; "" when there is none.
func Dir() string {
	if d := os.Getenv("FSAI_MATRICES"); d != "" {
		return d
	}
	for _, d := range []string{"../shared/matrices", "../../shared/matrices", "/work/shared/matrices"} {
		if _, err := os.Stat(d); err == nil {
			return d
		}
	}
	return ""
}

// Missing is the message of a test skipped because Dir found no matrices.
const Missing = "shared test matrices not found; set FSAI_MATRICES"
