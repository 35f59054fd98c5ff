#!/usr/bin/env bash
# Checks that the tracked tree is documentation for users, not a record of
# how it was made, and that it stays small:
#   - docs/, README.md, scripts/ and deploy/ (every line), and the comments of the
#     Go, C and CUDA sources, name no round of development work, no loan of a
#     machine, no numbered run, no GPU machine kind of the rented machines and
#     no calendar date (the patterns below; this file spells each word with a
#     bracket, so that it passes its own check);
#   - the tracked files outside testdata/ folders hold at most 4 MB, and
#     docs/figures/ at most 2 MB.
# Prints file:line: text for every hit and exits 1 if there is any.
#
#   scripts/check-tree.sh [DIR]       check the git work tree at DIR (default: this one)
#   scripts/check-tree.sh --self-test plant each kind of hit in a scratch repository
#                                     and check that every one is caught
set -euo pipefail

# What the text must not name (extended regular expressions, case-insensitive).
ordinal='(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth|[0-9]+(st|nd|rd|th))'
patterns=(
	'\bse[s]sion'                             # a round of work, also numbered
	"\b$ordinal (round|lea[s]e|sitting)s?\b"  # an ordinal round of work
	'\b(lea[s]e[sd]?|le[n]t)\b'               # a loan of a machine (not "release")
	'\br[u]n[0-9]+\b|\bs[0-9]+r[u]n'          # numbered runs
	'\bnv[i]dia-h[0-9]{3}'                    # GPU machine kinds
	'\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b'     # calendar dates
)
# Files exempt from the text rules, each with its reason (none today).
exempt=()
max_tree=$((4 * 1024 * 1024))
max_figures=$((2 * 1024 * 1024))

# comments prints "file:line: text" for the comment text of C-like sources
# (// and /* */ comments; string literals holding // count as comments,
# which errs on the side of checking).
comments() {
	awk '
	FNR == 1 { inblock = 0 }
	{
		line = $0; out = ""
		while (line != "") {
			if (inblock) {
				e = index(line, "*/")
				if (e == 0) { out = out " " line; line = ""; break }
				out = out " " substr(line, 1, e - 1); line = substr(line, e + 2); inblock = 0
				continue
			}
			s = index(line, "//"); b = index(line, "/*")
			if (s > 0 && (b == 0 || s < b)) { out = out " " substr(line, s + 2); line = ""; break }
			if (b > 0) { line = substr(line, b + 2); inblock = 1; continue }
			line = ""
		}
		if (out != "") print FILENAME ":" FNR ":" out
	}' "$@"
}

# check DIR prints every hit under the git work tree DIR; its status is 1
# if there was any.
check() (
	cd "$1"
	if ! git rev-parse --git-dir > /dev/null 2>&1; then
		echo "check-tree: $1 is not a git work tree" >&2
		return 2
	fi
	local regex text=() src=() f
	regex=$(IFS='|'; echo "${patterns[*]}")
	while IFS= read -r -d '' f; do
		[[ -f $f ]] || continue
		for e in "${exempt[@]+"${exempt[@]}"}"; do [[ $f == "$e" ]] && continue 2; done
		case $f in
		docs/* | README.md | scripts/* | deploy/*) text+=("$f") ;;
		*.go | *.c | *.h | *.cu | *.cuh) src+=("$f") ;;
		esac
	done < <(git ls-files -z)
	local hits=0
	if ((${#text[@]})) && grep -HnIiE "$regex" "${text[@]}"; then hits=1; fi
	if ((${#src[@]})) && comments "${src[@]}" | grep -iE "^[^:]*:[0-9]+:.*($regex)"; then hits=1; fi

	local tree=0 figures=0 size
	while IFS= read -r -d '' f; do
		[[ -f $f ]] || continue
		case /$f in */testdata/*) continue ;; esac
		size=$(stat -c %s "$f")
		tree=$((tree + size))
		[[ $f == docs/figures/* ]] && figures=$((figures + size))
	done < <(git ls-files -z)
	if ((tree > max_tree)); then
		echo "tracked files outside testdata/: $tree bytes, more than $max_tree" >&2; hits=1
	fi
	if ((figures > max_figures)); then
		echo "docs/figures/: $figures bytes, more than $max_figures" >&2; hits=1
	fi
	return $hits
)

# self_test plants one hit of every kind, and text that must pass, in a
# scratch repository and checks that exactly the planted lines are reported.
self_test() {
	local dir out want
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' RETURN
	git -C "$dir" init -q
	mkdir -p "$dir/docs" "$dir/scripts" "$dir/pkg/testdata"
	# the planted words, put together here so that this file passes its own check
	local ses=sess${empty:-}ion run=r${empty:-}un lea=lea${empty:-}se lnt=le${empty:-}nt kind=nvi${empty:-}dia-h200-x2
	local date=20${empty:-}01-02-03
	local ord="The thi${empty:-}rd round of work made it faster."
	cat > "$dir/docs/a.md" <<-EOF
	The collection runs in rounds; it releases its buffers.
	Measured in the fourteenth $ses.
	Raw results of ${run}12 are gone.
	On $kind we measured this.
	$ord
	While the $lea lasted.
	EOF
	cat > "$dir/scripts/b.sh" <<-EOF
	# measured $date
	echo s16${run}3
	EOF
	cat > "$dir/pkg/c.go" <<-EOF
	package pkg

	// State is kept (docs, sixth $ses).
	var x = "${run}3" // a string in code is not checked

	/* a block comment
	   $lnt by the machine room */
	EOF
	printf 'x' > "$dir/pkg/testdata/big"
	git -C "$dir" add -A
	out=$(check "$dir" 2>&1) && { echo "self-test: the check passed a tree with planted hits" >&2; return 1; }
	want='docs/a.md:2:
docs/a.md:3:
docs/a.md:4:
docs/a.md:5:
docs/a.md:6:
pkg/c.go:3:
pkg/c.go:7:
scripts/b.sh:1:
scripts/b.sh:2:'
	if [[ $(grep -oE '^[^:]+:[0-9]+:' <<< "$out" | sort) != "$want" ]]; then
		printf 'self-test: reported\n%s\nwanted the lines\n%s\n' "$out" "$want" >&2
		return 1
	fi
	# a large file under testdata/ does not count; one outside does
	head -c $((max_tree + 1)) /dev/zero > "$dir/pkg/testdata/big"
	git -C "$dir" rm -q --cached docs/a.md scripts/b.sh pkg/c.go
	check "$dir" > /dev/null 2>&1 || { echo "self-test: testdata/ counted in the size" >&2; return 1; }
	mv "$dir/pkg/testdata/big" "$dir/pkg/big" && git -C "$dir" add -A pkg/big
	if check "$dir" > /dev/null 2>&1; then echo "self-test: a tree over $max_tree bytes passed" >&2; return 1; fi
	echo "check-tree self-test: ok"
}

if [[ ${1:-} == --self-test ]]; then
	self_test
else
	status=0
	check "${1:-$(cd "$(dirname "$0")/.." && pwd)}" || status=$?
	if ((status == 1)); then
		echo "check-tree: the lines above name development history (rounds of work, machine loans, numbered runs, machine kinds, dates) or the tree is too large; describe what the software does now" >&2
	fi
	exit $status
fi
