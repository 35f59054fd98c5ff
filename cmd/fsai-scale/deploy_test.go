package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// flagSpec maps a program's flag names to whether the flag takes a value
// (as the next word when not written -name=value).
type flagSpec map[string]bool

// fsaiDistFlags reads fsai-dist's flags from its -h output: "  -name type"
// for flags with a value, "  -name" for booleans.
func fsaiDistFlags(t *testing.T) flagSpec {
	t.Helper()
	out, err := exec.Command(fsaiDist, "-h").CombinedOutput()
	if err != nil {
		t.Fatalf("fsai-dist -h: %v\n%s", err, out)
	}
	spec := flagSpec{}
	for _, m := range regexp.MustCompile(`(?m)^  -(\S+)( \S+)?`).FindAllStringSubmatch(string(out), -1) {
		spec[m[1]] = m[2] != ""
	}
	for _, name := range []string{"problem", "matrix", "report", "backend", "prec", "gpu.share", "write-matrix"} {
		if _, ok := spec[name]; !ok {
			t.Fatalf("fsai-dist -h lacks -%s: is the parsing of its output broken?\n%s", name, out)
		}
	}
	return spec
}

// scaleFlags returns the flags of an fsai-scale subcommand.
func scaleFlags(sub string) flagSpec {
	cmd := newSubcommand(sub)
	if cmd == nil {
		return nil
	}
	spec := flagSpec{}
	cmd.flagSet().VisitAll(func(f *flag.Flag) {
		b, ok := f.Value.(interface{ IsBoolFlag() bool })
		spec[f.Name] = !(ok && b.IsBoolFlag())
	})
	return spec
}

// check checks that each flag in words exists in spec and that nothing
// else is there: flag values are skipped, scanning stops at a shell
// operator (||, &&, |, ;) or redirection.
func (spec flagSpec) check(words []string) (checked int, err error) {
	for i := 0; i < len(words); i++ {
		w := words[i]
		if w == "||" || w == "&&" || w == "|" || w == ";" || strings.HasPrefix(w, ">") || strings.HasPrefix(w, "2>") {
			break
		}
		if !strings.HasPrefix(w, "-") || w == "-" {
			return checked, fmt.Errorf("%q is not a flag", w)
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
		takesValue, ok := spec[name]
		if !ok {
			return checked, fmt.Errorf("no flag -%s", name)
		}
		checked++
		if takesValue && !hasValue {
			i++
		}
	}
	return checked, nil
}

// openDefaults rewrites ${VAR:-words} and ${VAR:+words} so that the words
// inside count as words of the line (the closing brace stays on the last).
var openDefaults = regexp.MustCompile(`\$\{\w+:[-+]`)

// commandLines returns the command lines of a bash script: continuation
// lines joined, blank lines and comments dropped, defaults opened.
func commandLines(script string) []string {
	var lines []string
	for _, line := range strings.Split(strings.ReplaceAll(script, "\\\n", " "), "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			lines = append(lines, openDefaults.ReplaceAllString(line, " "))
		}
	}
	return lines
}

// shellWords splits a line at blanks outside quotes and removes the quotes;
// it expands nothing.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	var quote rune
	inWord := false
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// Every flag the SLURM templates pass to fsai-dist or fsai-scale must exist
// (a renamed flag would make every job fail at once with status 2), and the
// templates must be valid bash.
func TestSlurmTemplates(t *testing.T) {
	dist := fsaiDistFlags(t)
	scripts, err := filepath.Glob("../../deploy/slurm/*.sbatch")
	if err != nil || len(scripts) < 2 {
		t.Fatalf("want solve.sbatch and scaling.sbatch under deploy/slurm, found %v (%v)", scripts, err)
	}
	for _, script := range scripts {
		t.Run(filepath.Base(script), func(t *testing.T) {
			if out, err := exec.Command("bash", "-n", script).CombinedOutput(); err != nil {
				t.Fatalf("bash -n: %v\n%s", err, out)
			}
			data, err := os.ReadFile(script)
			if err != nil {
				t.Fatal(err)
			}
			runs, checked := 0, 0
			for _, line := range commandLines(string(data)) {
				words := shellWords(line)
				for i, w := range words {
					var n int
					var err error
					switch path.Base(w) {
					case "fsai-dist":
						n, err = dist.check(words[i+1:])
					case "fsai-scale":
						n, err = checkScale(words[i+1:], dist)
					default:
						continue
					}
					if err != nil {
						t.Errorf("%s: %v", line, err)
					}
					runs++
					checked += n
					break
				}
			}
			if runs == 0 || checked == 0 {
				t.Errorf("found %d runs of fsai-dist or fsai-scale and %d flags: nothing was checked", runs, checked)
			}
		})
	}
}

// checkScale checks "SUBCOMMAND flags -- fsai-dist flags".
func checkScale(words []string, dist flagSpec) (int, error) {
	if len(words) == 0 || scaleFlags(words[0]) == nil {
		return 0, fmt.Errorf("fsai-scale without a known subcommand: %v", words)
	}
	own, passthrough := splitArgs(words[1:])
	n, err := scaleFlags(words[0]).check(own)
	if err != nil {
		return n, fmt.Errorf("fsai-scale %s: %w", words[0], err)
	}
	m, err := dist.check(passthrough)
	if err != nil {
		err = fmt.Errorf("fsai-dist, after --: %w", err)
	}
	return n + m, err
}

// The checker itself must catch a wrong flag, a value mistaken for a flag
// and a stray argument.
func TestFlagCheck(t *testing.T) {
	spec := flagSpec{"tol": true, "v": false}
	for _, c := range []struct {
		line string
		ok   bool
	}{
		{`-tol 1e-8 -v || status=$?`, true},
		{`-tol=1e-8 -v > log`, true},
		{`-tol -1e-8`, true}, // a value that starts with a dash
		{`-tolerance 1e-8`, false},
		{`-v 1e-8`, false},
		{`"-tol" 1 ${X:+-nope "$X"}`, false},
	} {
		_, err := spec.check(shellWords(commandLines(c.line)[0]))
		if (err == nil) != c.ok {
			t.Errorf("%s: error %v, want ok %v", c.line, err, c.ok)
		}
	}
}
