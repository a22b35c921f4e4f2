package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/cellrate/cellrate/bench/paired"
)

// The report's intervals say where a rerun's figures land (paired.Runs):
// agreement checks that against a rerun. make bench-agree runs it.

// An agreeRow is one comparison in both runs: the report's estimate and
// the rerun's.
type agreeRow struct {
	id, label string
	g         int
	kind      kind
	a, b      paired.Estimate
}

// within reports whether the rerun's figure lies within the report's
// interval.
func (r agreeRow) within() bool { return r.a.Lo <= r.b.Center && r.b.Center <= r.a.Hi }

// agreement pairs every comparison of a (the report) with the same one
// in b (the rerun), by group, goroutine count and label, in a's order;
// comparisons in only one of them are left out.
func agreement(a, b results) []agreeRow {
	var out []agreeRow
	for _, ga := range a.Groups {
		gb, ok := b.find(ga.ID, ga.G)
		if !ok {
			continue
		}
		for _, ra := range ga.Rows {
			for _, rb := range gb.Rows {
				if rb.Label != ra.Label {
					continue
				}
				ea, _ := estimate(ga.Kind, ra)
				eb, _ := estimate(ga.Kind, rb)
				out = append(out, agreeRow{ga.ID, ra.Label, ga.G, ga.Kind, ea, eb})
			}
		}
	}
	return out
}

// agreeFiles reads the report's results.json and the rerun's and writes
// how many of the rerun's figures fall within the report's intervals,
// and the ones that do not.
func agreeFiles(w io.Writer, report, rerun string) error {
	var a, b results
	for _, f := range []struct {
		path string
		res  *results
	}{{report, &a}, {rerun, &b}} {
		js, err := os.ReadFile(f.path)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(js, f.res); err != nil {
			return fmt.Errorf("%s: %w", f.path, err)
		}
	}
	writeAgreement(w, a, b, agreement(a, b))
	return nil
}

func writeAgreement(w io.Writer, a, b results, rows []agreeRow) {
	in, open := 0, 0
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "outside\tg\treport\trerun\t\n")
	for _, r := range rows {
		switch {
		case r.a.Achieved == 0:
			open++
		case r.within():
			in++
		default:
			fmt.Fprintf(tw, "%s: %s\t%d\t%s\t%s\t\n", r.id, r.label, r.g, fmtEst(r.kind, r.a), fmtEst(r.kind, r.b))
		}
	}
	tw.Flush()
	n := len(rows) - open
	if n == 0 {
		fmt.Fprintf(w, "no comparison with an interval in both runs\n")
		return
	}
	fmt.Fprintf(w, "\n%d of %d figures of the rerun (%.1f%%) fall within the report's %.0f%% intervals", in, n, 100*float64(in)/float64(n), 100*level)
	if open > 0 {
		fmt.Fprintf(w, "; %d more have no interval in the report", open)
	}
	fmt.Fprintln(w)
	ca, cb := a.Config, b.Config
	if ca.Procs != cb.Procs || ca.Rounds != cb.Rounds || ca.Turn != cb.Turn {
		fmt.Fprintf(w, "the runs differ in size (%d processes of %d rounds of %v, against %d of %d of %v): an interval is for a rerun of its own size\n",
			ca.Procs, ca.Rounds, ca.Turn, cb.Procs, cb.Rounds, cb.Turn)
	}
	fmt.Fprintf(w, "load average %s to %s in the report's run, %s to %s in the rerun\n",
		a.Machine.LoadBefore, a.Machine.LoadAfter, b.Machine.LoadBefore, b.Machine.LoadAfter)
}
