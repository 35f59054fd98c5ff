module example.org/heat

go 1.25.0

require github.com/fsai-dist/fsai-dist v0.0.0

require (
	github.com/ebitengine/purego v0.11.3 // indirect
	gonum.org/v1/gonum v0.17.0 // indirect
)

replace github.com/fsai-dist/fsai-dist => ../..
