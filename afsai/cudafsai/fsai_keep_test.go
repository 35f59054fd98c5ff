package cudafsai

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/testmatrices"
)

// TestAdaptiveFactorMatchesSetup: G kept on the device, from the local
// system's parts joined on the device, is AdaptiveSetup's G of the joined
// system split at own, bit for bit: the rows' entries left of own on the host, the
// diagonal block (columns renumbered from own) on the device, and the
// device's transpose of the block is the host's. With own 0 (one rank), own
// n/3 (a rank holding rows of its neighbours first) and own n (no rows), in
// one batch and in batches of 97 rows (joined on the device; the active
// rows moved into levels of their own down to one row), with the
// diagonal block uploaded by the set-up or read where a bound operator holds
// it (Split.Bound), in float64 or float32.
func TestAdaptiveFactorMatchesSetup(t *testing.T) {
	b := openGPU(t)
	p := afsai.DefaultParams()
	for _, c := range fsaiCases(t) {
		n := c.a.Rows
		for _, own := range []int{0, n / 3, n} {
			for _, batch := range []int{0, 97} {
				for _, bound := range []string{"uploaded", "double", "single"} {
					t.Run(fmt.Sprintf("%s/own%d/batch%d/%s", c.name, own, batch, bound), func(t *testing.T) {
						rows := make([]int, n-own)
						for k := range rows {
							rows[k] = own + k
						}
						want, wst, _, err := b.AdaptiveSetup(c.a32, rows, p)
						if err != nil {
							t.Fatal(err)
						}
						f, st, kt, err := b.adaptiveFactor(boundSplit(t, b, splitAt(c.a, own), bound), p,
							fsaiJob{maxBatch: batch, levelRows: batch / 97}) // levels down to one row with batches
						if err != nil {
							t.Fatal(err)
						}
						defer freeDeviceFactor(f)
						checkKeptFactor(t, b, "AdaptiveSetup", f, st, own, want, wst)
						t.Logf("%d rows, %d in the left arrays; assemble %.3f ms, transpose %.3f ms",
							len(rows), f.Left.NNZ(), 1e3*kt.Assemble, 1e3*kt.Transpose)
					})
				}
			}
		}
	}
}

// checkKeptFactor checks that f, with the statistics st, is want (whose
// statistics are wst, from the CPU or the device's set-up of the joined
// system, named by name) split at own, bit for bit, and that f's
// transpose of its diagonal block is the host's.
func checkKeptFactor(t *testing.T, b *Device, name string, f afsai.DeviceFactor, st afsai.Stats, own int,
	want *csr.Matrix[float32], wst afsai.Stats) {
	t.Helper()
	if st != wst {
		t.Errorf("stats %+v, %s's %+v", st, name, wst)
	}
	diag, _ := readBack(t, b, f.Diag)
	diagT, _ := readBack(t, b, f.DiagT)
	if k := joinedRowDiff(f, diag, own, want); k >= 0 {
		lc, lv := f.LeftRow(k)
		dc, dv := diag.Row(k)
		wc, wv := want.Row(k)
		t.Fatalf("row %d: left %v %v, diagonal block %v %v; %s's %v %v", k, lc, lv, dc, dv, name, wc, wv)
	}
	checkSameMatrix(t, "the device's transpose of the diagonal block", diagT, csr.Transpose(diag))
}

// joinedRowDiff returns the first row k whose entries in f's Left, then in
// diag with own added to the columns, are not those of want's row k bit for
// bit; -1 when all agree.
func joinedRowDiff(f afsai.DeviceFactor, diag *csr.Matrix[float64], own int, want *csr.Matrix[float32]) int {
	if f.LeftRows == nil && f.Left.Rows != want.Rows || diag.Rows != want.Rows || diag.Cols != want.Rows {
		return 0
	}
	for k := range want.Rows {
		lc, lv := f.LeftRow(k)
		dc, dv := diag.Row(k)
		wc, wv := want.Row(k)
		if len(lc)+len(dc) != len(wc) || !slices.Equal(lc, wc[:len(lc)]) {
			return k
		}
		for j, v := range lv {
			if math.Float32bits(v) != math.Float32bits(wv[j]) {
				return k
			}
		}
		for j, col := range dc {
			w := len(lc) + j
			if int(col)+own != int(wc[w]) || dv[j] != float64(wv[w]) {
				return k
			}
		}
	}
	return -1
}

// splitAt returns a as a local system split at own (afsai.Split): the
// border holds the rows before own and the other rows' entries before own,
// in float32, up to the last row with any (as the block collection leaves
// it); the diagonal block the rest, in float64.
func splitAt(a *csr.Matrix[float64], own int) afsai.Split {
	n := a.Rows
	border := &csr.Matrix[float32]{Rows: n, Cols: n, RowPtr: make([]int32, n+1)}
	diag := &csr.Matrix[float64]{Rows: n - own, Cols: n - own, RowPtr: make([]int32, n-own+1)}
	for i := range n {
		cols, vals := a.Row(i)
		for k, c := range cols {
			if i < own || int(c) < own {
				border.ColIdx, border.Val = append(border.ColIdx, c), append(border.Val, float32(vals[k]))
			} else {
				diag.ColIdx, diag.Val = append(diag.ColIdx, c-int32(own)), append(diag.Val, vals[k])
			}
		}
		border.RowPtr[i+1] = int32(len(border.ColIdx))
		if i >= own {
			diag.RowPtr[i-own+1] = int32(len(diag.ColIdx))
		}
	}
	for border.Rows > 0 && border.RowPtr[border.Rows-1] == border.RowPtr[border.Rows] {
		border.Rows--
	}
	border.RowPtr = border.RowPtr[:border.Rows+1]
	return afsai.Split{Border: border, Diag: diag, Own: own}
}

// boundSplit returns s with its diagonal block bound on b as a solver's
// operator binds it (Split.Bound) in the precision named, or s as it is for
// "uploaded". The block is freed when the test ends.
func boundSplit(t *testing.T, b *Device, s afsai.Split, bound string) afsai.Split {
	prec := map[string]backend.Precision{"double": backend.Double, "single": backend.Single}
	p, ok := prec[bound]
	if !ok {
		return s
	}
	m, err := b.Backend().NewMatrix(s.Diag, nil, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Free)
	s.Bound = m
	return s
}

// TestFactorsRefuseWhatSetupsRefuse: a diagonal entry that is not
// positive, in the border or in the diagonal block, is refused by
// AdaptiveFactor and StaticFactor with CheckAdaptive's and CheckStatic's
// error for the joined system, found where the parts are joined on the
// device; so is a split whose parts do not fit, and static parameters that
// Static refuses.
func TestFactorsRefuseWhatSetupsRefuse(t *testing.T) {
	b := openGPU(t)
	p, sp := afsai.DefaultParams(), afsai.DefaultConfig().StaticParams
	type factor func(afsai.Split) (afsai.DeviceFactor, afsai.Stats, afsai.KernelTimes, error)
	setups := []struct {
		name   string
		factor factor
		check  func(*csr.Matrix[float32]) error
	}{
		{"adaptive", func(s afsai.Split) (afsai.DeviceFactor, afsai.Stats, afsai.KernelTimes, error) {
			return b.adaptiveFactor(s, p, fsaiJob{})
		}, func(a *csr.Matrix[float32]) error { _, err := afsai.CheckAdaptive(a, nil, p); return err }},
		{"static", func(s afsai.Split) (afsai.DeviceFactor, afsai.Stats, afsai.KernelTimes, error) {
			return b.StaticFactor(s, sp)
		}, func(a *csr.Matrix[float32]) error { _, err := afsai.CheckStatic(a, nil, sp); return err }},
	}
	refused := func(f factor, s afsai.Split) error {
		df, _, _, err := f(s)
		if err == nil {
			freeDeviceFactor(df)
		}
		return err
	}
	a := testmatrices.Stencil3D(6, 7)
	n := a.Rows
	for _, setup := range setups {
		for _, bad := range []int{n / 5, n / 2, n - 1} {
			for _, own := range []int{0, n / 3} {
				for _, bound := range []string{"uploaded", "double"} {
					c := csr.Convert[float64](a)
					c.Val = slices.Clone(a.Val)
					pos := c.RowPtr[bad]
					for c.ColIdx[pos] != int32(bad) {
						pos++
					}
					c.Val[pos] = -1
					wantErr := setup.check(csr.Convert[float32](c))
					err := refused(setup.factor, boundSplit(t, b, splitAt(c, own), bound))
					if wantErr == nil || err == nil || err.Error() != wantErr.Error() {
						t.Errorf("%s: row %d bad, own %d, block %s: error %v, the CPU's check's %v", setup.name, bad, own, bound, err, wantErr)
					}
				}
			}
		}
		s := splitAt(a, n/3)
		s.Own++
		if refused(setup.factor, s) == nil {
			t.Errorf("%s: parts that do not fit: no error", setup.name)
		}
	}
	for _, bad := range []afsai.StaticParams{{Tau: 0.01, K: 0}, {Tau: -1, K: 2}, {Tau: 0.01, K: 2, Delta: math.Inf(1)}} {
		_, wantErr := afsai.CheckStatic(csr.Convert[float32](a), nil, bad)
		df, _, _, err := b.StaticFactor(splitAt(a, 0), bad)
		if err == nil {
			freeDeviceFactor(df)
		}
		if wantErr == nil || err == nil || err.Error() != wantErr.Error() {
			t.Errorf("static parameters %+v: error %v, CheckStatic's %v", bad, err, wantErr)
		}
	}
}

// freeDeviceFactor releases what AdaptiveFactor left on the device.
func freeDeviceFactor(f afsai.DeviceFactor) {
	f.Diag.Free()
	f.DiagT.Free()
	if f.Scratch != nil {
		f.Scratch()
	}
}
