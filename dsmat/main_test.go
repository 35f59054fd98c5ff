package dsmat

import (
	"testing"

	"github.com/fsai-dist/fsai-dist/internal/mpitest"
)

func TestMain(m *testing.M) { mpitest.Main(m) }
