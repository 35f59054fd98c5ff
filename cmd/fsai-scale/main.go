// Command fsai-scale runs scaling studies of fsai-dist: it launches
// fsai-dist once per rank count through mpirun or srun, collects the JSON
// reports, and writes a CSV table and PNG plots of the set-up time Tp, the
// solve time Ts, the total Tt = Tp + Ts, the time per iteration and the
// parallel efficiency against the rank count:
//
//	fsai-scale strong -ranks 1,2,4,8 -problem poisson7:128 -- -prec afsai -backend cuda
//	fsai-scale weak -ranks 1,2,4,8 -rows-per-rank 2000000 -family poisson7 -- -backend cuda
//	fsai-scale peers -ranks 1,2 -problem poisson7:64 -peers petsc
//
// Arguments after -- go to every fsai-dist run unchanged.
//
// Exit status: 0 every run succeeded; 3 the study is complete (CSV and plots
// written) but some run failed or did not converge; 2 bad usage, or the
// launcher or a program to run is missing (nothing was run); 1 any other
// failure (for example the output directory cannot be written).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
)

// Exit statuses.
const (
	exitOK       = 0
	exitFailure  = 1
	exitUsage    = 2
	exitRunsFail = 3
)

// subcommand is one of strong, weak and peers.
type subcommand interface {
	// flagSet registers the subcommand's flags on a new flag set.
	flagSet() *flag.FlagSet
	// run runs the study with the fsai-dist arguments given after --,
	// logging progress to log, and returns the exit status.
	run(passthrough []string, log io.Writer) (int, error)
}

func newSubcommand(name string) subcommand {
	switch name {
	case "strong":
		return &studyCmd{}
	case "weak":
		return &studyCmd{weak: true}
	case "peers":
		return &peersCmd{}
	}
	return nil
}

const usageText = `usage: fsai-scale strong|weak|peers [flags] [-- fsai-dist flags]

  strong  fixed problem, one run per rank count: times and efficiency T(r0)*r0/(T(N)*N)
  weak    fixed rows per rank (problem N^3 ~ rows-per-rank * ranks): efficiency T(r0)/T(N)
  peers   the same problem through PETSc's CG (petsc_cg) and CuPy's CG (cupy_cg.py), ratios
          of their time per iteration to fsai-dist's

Run "fsai-scale SUBCOMMAND -h" for the flags of each.
`

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "help" {
		fmt.Fprint(stdout, usageText)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	cmd := newSubcommand(args[0])
	if cmd == nil {
		fmt.Fprintf(stderr, "fsai-scale: unknown subcommand %q\n%s", args[0], usageText)
		return exitUsage
	}
	own, passthrough := splitArgs(args[1:])
	fs := cmd.flagSet()
	fs.SetOutput(stderr)
	if err := fs.Parse(own); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage // the flag package has printed the error and the usage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "fsai-scale: unexpected argument %q (fsai-dist flags go after --)\n", fs.Arg(0))
		return exitUsage
	}
	code, err := cmd.run(passthrough, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "fsai-scale %s: %v\n", args[0], err)
		var u usageError
		if errors.As(err, &u) {
			return exitUsage
		}
		return exitFailure
	}
	return code
}

// splitArgs splits the command line at the first "--": fsai-scale's own
// flags before it, fsai-dist's after it.
func splitArgs(args []string) (own, passthrough []string) {
	i := slices.Index(args, "--")
	if i < 0 {
		return args, nil
	}
	return args[:i], args[i+1:]
}

// usageError marks errors that mean nothing was run because the command
// line or the environment (a missing program) is wrong: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}
