package main

import (
	"os"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/fsai-dist/fsai-dist/comm"
)

// newLogger logs to stderr with the rank in every line. Only rank 0 logs
// unless verbose is set: 512 ranks printing progress help nobody.
func newLogger(c *comm.Comm, verbose bool) *zap.Logger {
	if c.Rank() != 0 && !verbose {
		return zap.NewNop()
	}
	cfg := zap.NewDevelopmentEncoderConfig()
	cfg.EncodeTime = zapcore.TimeEncoderOfLayout("15:04:05.000")
	cfg.EncodeCaller = nil
	cfg.CallerKey = ""
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(cfg), zapcore.Lock(os.Stderr), zap.InfoLevel)
	return zap.New(core).With(zap.Int("rank", c.Rank()))
}
