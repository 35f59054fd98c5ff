// Command mtxgen writes a built-in problem of fsai-dist (package problem) as
// a Matrix Market file, so that programs that read only files, such as the
// hypre peer driver, can solve exactly the matrix fsai-dist generates.
//
//	go run ./scripts/mtxgen -problem diffusion:24 -out diffusion24.mtx
//
// The file of a symmetric problem is "coordinate real symmetric" with the
// lower triangle stored, that of a nonsymmetric one (convdiff with
// convection) "coordinate real general" with every entry; 1-based, values
// printed with 17 significant digits so they read back bit for bit.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/fsai-dist/fsai-dist/problem"
)

func main() {
	spec := flag.String("problem", "", "problem spec, e.g. poisson7:32 or diffusion:24")
	out := flag.String("out", "", "output file (written to a temporary file and renamed)")
	flag.Parse()
	if *spec == "" || *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: mtxgen -problem SPEC -out PATH")
		os.Exit(2)
	}
	if err := write(*spec, *out); err != nil {
		fmt.Fprintln(os.Stderr, "mtxgen:", err)
		os.Exit(1)
	}
}

// write generates the problem and writes to path its lower triangle, or
// every entry when it is not symmetric.
func write(spec, path string) error {
	s, err := problem.Parse(spec)
	if err != nil {
		return err
	}
	n := s.Rows()
	r, err := s.Generate(0, n)
	if err != nil {
		return err
	}
	symmetric, kind := s.Symmetric(), "symmetric"
	if !symmetric {
		kind = "general"
	}
	stored := func(i, j int64) bool { return !symmetric || j <= i }
	count := int64(0)
	for i := range r.Count() {
		for k := r.RowPtr[i]; k < r.RowPtr[i+1]; k++ {
			if stored(int64(i), r.Col[k]) {
				count++
			}
		}
	}

	f, err := os.CreateTemp(filepath.Dir(path), ".mtxgen-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // no-op after the rename
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "%%%%MatrixMarket matrix coordinate real %s\n%% %s, written by scripts/mtxgen\n%d %d %d\n", kind, s, n, n, count)
	buf := make([]byte, 0, 64)
	for i := range r.Count() {
		for k := r.RowPtr[i]; k < r.RowPtr[i+1] && stored(int64(i), r.Col[k]); k++ {
			buf = strconv.AppendInt(buf[:0], int64(i)+1, 10)
			buf = append(buf, ' ')
			buf = strconv.AppendInt(buf, r.Col[k]+1, 10)
			buf = append(buf, ' ')
			buf = strconv.AppendFloat(buf, r.Val[k], 'g', 17, 64)
			buf = append(buf, '\n')
			w.Write(buf) // a write error sticks and Flush returns it
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return os.Rename(f.Name(), path)
}
