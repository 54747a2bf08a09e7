package mechanisms

import (
	"math"
	"strings"
	"testing"
)

func TestLoadPtableCSV(t *testing.T) {
	tab, err := loadPtableCSV("testdata/ptable_abs_example.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.rows) != 4 || tab.maxV != 2 {
		t.Fatalf("got %d rows, max noise %d; want 4 rows, max noise 2", len(tab.rows), tab.maxV)
	}
	builtIn := absExamplePtable()
	for k, row := range tab.rows {
		want := builtIn.rows[k].entries
		if len(row.entries) != len(want) {
			t.Fatalf("row %d: %d entries, want %d", k+1, len(row.entries), len(want))
		}
		for j, e := range row.entries {
			if e.v != want[j].v || math.Abs(e.lb-want[j].lb) > 1e-7 || math.Abs(e.ub-want[j].ub) > 1e-7 {
				t.Errorf("row %d entry %d: %+v, want %+v", k+1, j, e, want[j])
			}
		}
		if first, last := row.entries[0], row.entries[len(row.entries)-1]; first.lb != 0 || last.ub != 1 {
			t.Errorf("row %d: intervals span [%v, %v), want exactly [0, 1)", k+1, first.lb, last.ub)
		}
	}
}

func TestParsePtableCSV(t *testing.T) {
	const header = "i,j,p,v,p_int_lb,p_int_ub\n"
	tests := []struct {
		name    string
		csv     string
		wantErr string // substring of the error; empty for success
		check   func(t *testing.T, tab *ptable)
	}{
		{name: "minimal, rows out of order, extra column", csv: "v,p_int_ub,i,j,p,p_int_lb,note\n" +
			"1,1,2,3,0.5,0.5,x\n" +
			"-1,0.5,2,1,0.5,0,x\n" +
			"0,1,1,1,1,0,x\n",
			check: func(t *testing.T, tab *ptable) {
				if got := tab.noise(1, 0.99); got != 0 {
					t.Errorf("count 1: noise %d, want 0", got)
				}
				if got := tab.noise(7, 0.25); got != -1 {
					t.Errorf("count 7 at 0.25: noise %d, want -1 (last row serves larger counts)", got)
				}
				if got := tab.noise(7, 0.5); got != 1 {
					t.Errorf("count 7 at 0.5: noise %d, want 1 (intervals are half-open)", got)
				}
			}},
		{name: "zero-probability entry and type all", csv: "i,j,p,v,p_int_lb,p_int_ub,type\n" +
			"1,3,0,2,0.4,0.4,all\n" +
			"1,1,0.4,0,0,0.4,all\n" +
			"1,2,0.6,1,0.4,1,all\n",
			check: func(t *testing.T, tab *ptable) {
				if got := tab.noise(1, 0.4); got != 1 {
					t.Errorf("count 1 at 0.4: noise %d, want 1 (the zero-width entry is never chosen)", got)
				}
			}},
		{name: "bounds printed to 8 decimals", csv: header +
			"1,0,0.33333333,-1,0,0.33333333\n" +
			"1,1,0.33333333,0,0.33333333,0.66666667\n" +
			"1,2,0.33333334,1,0.66666667,1\n"},
		{name: "empty file", csv: "", wantErr: "the file is empty"},
		{name: "missing column", csv: "i,j,p,v,p_int_lb\n1,1,1,0,0\n",
			wantErr: `line 1: missing column "p_int_ub"`},
		{name: "bad number", csv: header + "1,1,1,0,0,1\n2,2,one,0,0,1\n",
			wantErr: `line 3: column p: "one" is not a number`},
		{name: "bad integer", csv: header + "1,1,1,0.5,0,1\n",
			wantErr: `line 2: column v: "0.5" is not an integer`},
		{name: "ragged line", csv: header + "1,1,1,0,0,1\n1,1,1\n",
			wantErr: "line 3: wrong number of fields"},
		{name: "v is not j - i", csv: header + "1,2,1,0,0,1\n",
			wantErr: "line 2: v = 0 but j - i = 1"},
		{name: "interval width differs from p", csv: header + "1,1,0.5,0,0,1\n",
			wantErr: "line 2: interval [0, 1) is 1 wide but p = 0.5"},
		{name: "gap between intervals", csv: header +
			"1,0,0.4,-1,0,0.4\n" +
			"1,1,0.5,0,0.5,1\n",
			wantErr: "line 3: row i = 1: interval starts at 0.5 but the previous one ends at 0.4 (intervals must tile [0, 1))"},
		{name: "first interval does not start at 0", csv: header + "1,1,0.9,0,0.1,1\n",
			wantErr: "line 2: row i = 1: the first interval starts at 0.1, not 0"},
		{name: "intervals stop short of 1", csv: header +
			"1,0,0.4,-1,0,0.4\n" +
			"1,1,0.5,0,0.4,0.9\n",
			wantErr: "line 3: row i = 1: the last interval ends at 0.9, not 1"},
		{name: "noise listed twice", csv: header +
			"1,1,0.5,0,0,0.5\n" +
			"1,1,0.5,0,0.5,1\n",
			wantErr: "line 3: row i = 1 lists noise v = 0 twice (also on line 2)"},
		{name: "missing row", csv: header + "1,1,1,0,0,1\n3,3,1,0,0,1\n",
			wantErr: "no lines for i = 2 (rows 1..3 must all be present)"},
		{name: "only row 0", csv: header + "0,0,1,0,0,1\n",
			wantErr: "no rows for counts >= 1"},
		{name: "row 0 perturbs zeros", csv: header + "0,1,1,1,0,1\n1,1,1,0,0,1\n",
			wantErr: "line 2: row i = 0 must map 0 to 0"},
		{name: "negative perturbed count", csv: header + "1,-1,1,-2,0,1\n",
			wantErr: "line 2: j = -1: a perturbed count cannot be negative"},
		{name: "even/odd split tables", csv: "i,j,p,v,p_int_lb,p_int_ub,type\n1,1,1,0,0,1,even\n",
			wantErr: `line 2: type "even" is not supported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, err := parsePtableCSV("t.csv", strings.NewReader(tt.csv))
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("no error, want one containing %q", tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "perturbation table t.csv") {
					t.Fatalf("error %q: want it to name the file t.csv and contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.check != nil {
				tt.check(t, tab)
			}
		})
	}
}

func TestLoadPtableCSVBadFile(t *testing.T) {
	_, err := New("cellkey", Params{"ptable": "testdata/ptable_bad_gap.csv"}, Env{})
	want := `mechanism parameter "ptable": must be "uniform", "abs_example" or the path of a CSV perturbation table: ` +
		`perturbation table testdata/ptable_bad_gap.csv line 4: row i = 1: interval starts at 0.6 but the previous one ends at 0.5`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("got %v\nwant an error starting %q", err, want)
	}
}

func TestUniformPtable(t *testing.T) {
	for _, d := range []int64{1, 2, 5} {
		tab, err := uniformPtable(d)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(tab.rows)) != d || tab.maxV != d {
			t.Fatalf("D=%d: %d rows, max noise %d", d, len(tab.rows), tab.maxV)
		}
		for k, row := range tab.rows {
			i := int64(k + 1)
			lo := -min(i, d)
			if int64(len(row.entries)) != d-lo+1 || row.entries[0].v != lo || row.entries[len(row.entries)-1].v != d {
				t.Errorf("D=%d row %d: noise %v..%v in %d entries, want %d..%d", d, i,
					row.entries[0].v, row.entries[len(row.entries)-1].v, len(row.entries), lo, d)
			}
			for _, e := range row.entries {
				if math.Abs(e.p-1/float64(d-lo+1)) > 1e-12 {
					t.Errorf("D=%d row %d: p = %v, want uniform", d, i, e.p)
				}
			}
		}
	}
	for _, d := range []int64{0, uniformMaxD + 1} {
		if _, err := uniformPtable(d); err == nil {
			t.Errorf("D=%d accepted", d)
		}
	}
}
