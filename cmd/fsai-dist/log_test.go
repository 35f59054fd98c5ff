package main

import (
	"math"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// TestRelResField: the log writes a relative residual as a JSON number in
// scientific notation, and NaN and infinities as zap spells them.
func TestRelResField(t *testing.T) {
	cases := map[float64]string{
		9.21512144240335e-09: `"relres": 9.215e-09`,
		1:                    `"relres": 1.000e+00`,
		3.81e5:               `"relres": 3.810e+05`,
		math.NaN():           `"relres": "NaN"`,
		math.Inf(1):          `"relres": "+Inf"`,
	}
	enc := zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig())
	for v, want := range cases {
		buf, err := enc.EncodeEntry(zapcore.Entry{Message: "pcg"}, []zap.Field{relres(v)})
		if err != nil {
			t.Fatal(err)
		}
		if got := buf.String(); !strings.Contains(got, want) {
			t.Errorf("relres %v: %q, want %s", v, got, want)
		}
	}
}
