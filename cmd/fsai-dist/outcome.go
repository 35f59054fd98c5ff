package main

import (
	"fmt"

	"github.com/fsai-dist/fsai-dist/krylov"
)

// usable reports whether the iterate of a solve that ended for reason is
// worth writing to -out: the solution, or an approximation to resume from
// with -x0. After a breakdown, NaN or divergence it is not.
func usable(reason krylov.Reason) bool {
	return reason != krylov.Breakdown && reason != krylov.NaN && reason != krylov.Diverged
}

// outcome is the one line that says why a solve did not converge, and
// where the iterate went.
func outcome(res krylov.Result, out string) string {
	line := fmt.Sprintf("did not converge: %s after %d iterations (relative residual %.3g)", res.Reason, res.Iterations, res.RelRes)
	if res.Reason == krylov.Interrupted {
		line = fmt.Sprintf("interrupted after %d iterations (relative residual %.3g): %s", res.Iterations, res.RelRes, res.Detail)
	} else if res.Detail != "" {
		line += ": " + res.Detail
	}
	switch {
	case !usable(res.Reason):
		return line
	case out != "":
		return line + "; the iterate is in " + out + " (resume with -x0 " + out + ")"
	default:
		return line + "; the iterate is not saved (no -out)"
	}
}

// allUsable reports whether every column's iterate is usable.
func allUsable(res []krylov.Result) bool {
	for _, r := range res {
		if !usable(r.Reason) {
			return false
		}
	}
	return true
}

// outcomes is outcome for several right-hand sides: the line of the first
// column that did not converge, naming it.
func outcomes(res []krylov.Result, out string) string {
	if len(res) == 1 {
		return outcome(res[0], out)
	}
	for k, r := range res {
		if !r.Converged {
			line := fmt.Sprintf("right-hand side %d of %d %s", k+1, len(res), outcome(r, out))
			if !allUsable(res) && usable(r.Reason) {
				line += " (not written: another column broke down)"
			}
			return line
		}
	}
	return ""
}
