package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/fsai-dist/fsai-dist/solver"
)

// defineOptions defines a flag of fs for each of the solver's options
// (solver.OptionTable), with its name, type, default and help.
func defineOptions(fs *flag.FlagSet) error {
	for _, op := range solver.OptionTable() {
		def := op.Default()
		var err error
		switch op.Type {
		case "int":
			var v int64
			v, err = strconv.ParseInt(def, 0, strconv.IntSize)
			fs.Int(op.Name, int(v), op.Doc)
		case "float":
			var v float64
			v, err = strconv.ParseFloat(def, 64)
			fs.Float64(op.Name, v, op.Doc)
		case "bool":
			var v bool
			v, err = strconv.ParseBool(def)
			fs.Bool(op.Name, v, op.Doc)
		default:
			fs.String(op.Name, def, op.Doc)
		}
		if err != nil {
			return fmt.Errorf("option %s: default %q: %w", op.Name, def, err)
		}
	}
	return nil
}

// solverOptions resolves the solver's options: the defaults, then the
// options file (-options), then FSAI_OPTIONS, then the flags given on the
// command line, each checked as it is read. A flag's value is checked
// after all are set, with the message "flag -name: ...".
func solverOptions(fs *flag.FlagSet, file string) (solver.Options, error) {
	opt := solver.DefaultOptions()
	if file != "" {
		if err := opt.SetFile(file); err != nil {
			return opt, err
		}
	}
	if err := opt.SetEnv(); err != nil {
		return opt, err
	}
	var err error
	fs.Visit(func(fl *flag.Flag) {
		if op, ok := solver.LookupOption(fl.Name); ok && err == nil {
			if perr := op.Parse(&opt, fl.Value.String()); perr != nil {
				err = fmt.Errorf("flag -%s: %w", fl.Name, perr)
			}
		}
	})
	if err != nil {
		return opt, err
	}
	for _, op := range solver.OptionTable() {
		if err := op.Check(&opt); err != nil {
			return opt, fmt.Errorf("flag -%s: %w", op.Name, err)
		}
	}
	return opt, nil
}

// optionValues returns the value of every solver option whose name
// starts with one of prefixes.
func optionValues(opt solver.Options, prefixes ...string) map[string]string {
	values := map[string]string{}
	for _, op := range solver.OptionTable() {
		for _, p := range prefixes {
			if strings.HasPrefix(op.Name, p) {
				values[op.Name] = op.Get(&opt)
			}
		}
	}
	return values
}
