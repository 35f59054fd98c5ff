module github.com/fsai-dist/fsai-dist

go 1.25.0

require (
	github.com/ebitengine/purego v0.11.3
	go.uber.org/zap v1.28.0
	gonum.org/v1/gonum v0.17.0
)

require go.uber.org/multierr v1.10.0 // indirect
