package main

import (
	"bytes"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cellrate/cellrate/bench/paired"
)

// sample returns n rounds of ns/op around mean, with multiplicative
// noise of the given spread, the same noise on CPU and wall time.
func sample(name string, mean, spread float64, n int, r *rand.Rand) paired.Sample {
	s := paired.Sample{Name: name}
	for range n {
		v := mean * math.Exp(spread*r.NormFloat64())
		s.CPU = append(s.CPU, v)
		s.Wall = append(s.Wall, v*1.3)
	}
	return s
}

// synthetic is a run whose truths are known: gcra twice as fast as the
// baseline, bucket as fast, window slower; httplimit adding 300 ns.
func synthetic() results {
	r := rand.New(rand.NewPCG(3, 4))
	base := func() paired.Sample { return sample("x-time-rate", 100, 0.02, 12, r) }
	return results{
		Config:  config{Rounds: 12, KeyCounts: []int{1000}},
		Machine: machine{Date: "2026-11-26", Go: "go1.26", OS: "linux", Arch: "amd64", CPU: "test CPU", CPUs: 2, GOMAXPROCS: 2, LoadBefore: "7.5", LoadAfter: "8.1", Took: "1m"},
		Groups: []group{
			{ID: "limiters/admit", Title: "admitting", Kind: speedup, G: 1, Rows: []row{
				{Label: "cellrate gcra", Ours: sample("gcra", 50, 0.02, 12, r), Base: base()},
				{Label: "cellrate bucket", Ours: sample("bucket", 100, 0.3, 12, r), Base: base()},
				{Label: "cellrate window", Ours: sample("window", 200, 0.02, 12, r), Base: base()},
			}},
			{ID: "limiters/deny", Title: "denying", Kind: speedup, G: 1, Rows: []row{
				{Label: "cellrate gcra", Ours: sample("gcra", 25, 0.02, 12, r), Base: base()},
			}},
			{ID: "keyed/1000", Title: "keyed", Kind: speedup, G: 1, Rows: []row{
				{Label: "vs sethvargo/go-limiter", Ours: sample("keyed", 50, 0.02, 12, r), Base: sample("sethvargo", 150, 0.02, 12, r)},
			}},
			{ID: "http/10/added", Title: "added", Kind: added, G: 1, Rows: []row{
				{Label: "cellrate httplimit", Ours: sample("httplimit", 310, 0.01, 12, r), Base: sample("none", 10, 0.01, 12, r)},
			}},
		},
	}
}

func TestVerdicts(t *testing.T) {
	res := synthetic()
	want := map[string]string{"cellrate gcra": "faster", "cellrate bucket": "no difference shown", "cellrate window": "slower"}
	g, _ := res.find("limiters/admit", 1)
	for _, r := range g.Rows {
		e, w := estimate(speedup, r)
		if v := verdict(speedup, e); !strings.HasPrefix(v, want[r.Label]) {
			t.Errorf("%s: %s (%+v), want %s", r.Label, v, e, want[r.Label])
		}
		// The wall figures are the CPU ones times 1.3 on both sides.
		if math.Abs(w.Center-e.Center) > 1e-9*e.Center {
			t.Errorf("%s: wall %v, cpu %v", r.Label, w.Center, e.Center)
		}
	}
	gcra := g.Rows[0]
	if e, _ := estimate(speedup, gcra); e.Lo > 2 || e.Hi < 2 || e.Hi/e.Lo > 1.1 {
		t.Errorf("gcra at half the baseline's ns: %+v, want an interval about 2", e)
	}
	a, _ := res.find("http/10/added", 1)
	if e, _ := estimate(added, a.Rows[0]); e.Lo < 290 || e.Hi > 310 || verdict(added, e) != "adds this" {
		t.Errorf("httplimit adds %+v (%s), want about 300 ns", e, verdict(added, e))
	}
	for _, c := range []struct {
		k    kind
		e    paired.Estimate
		want string
	}{
		{speedup, paired.Estimate{Center: 3, Lo: 1.5, Hi: 5, Achieved: 0.96}, "faster; spread too wide to say how much"},
		{speedup, paired.Estimate{Center: 0.5, Lo: 0.2, Hi: 0.6, Achieved: 0.96}, "slower; spread too wide to say how much"},
		{speedup, paired.Estimate{Center: 1, Lo: math.Inf(-1), Hi: math.Inf(1)}, "too few rounds for an interval"},
		{added, paired.Estimate{Center: 5, Lo: -3, Hi: 9, Achieved: 0.96}, "no cost shown (the interval holds 0)"},
		{added, paired.Estimate{Center: 50, Lo: 10, Hi: 90, Achieved: 0.96}, "spread too wide to say how much"},
	} {
		if got := verdict(c.k, c.e); got != c.want {
			t.Errorf("verdict(%v, %+v) = %q, want %q", c.k, c.e, got, c.want)
		}
	}
}

// TestRenderSynthetic: the report, the figures block and the charts of a
// known run: rows sorted fastest first, the figures quoting the report's
// own cells, each chart 800 px wide.
func TestRenderSynthetic(t *testing.T) {
	files, err := render(synthetic())
	if err != nil {
		t.Fatal(err)
	}
	md, fig := string(files["README.md"]), string(files["figures.md"])
	gcra := strings.Index(md, "| cellrate gcra | 50")
	bucket := strings.Index(md, "| cellrate bucket |")
	window := strings.Index(md, "| cellrate window |")
	if gcra < 0 || !(gcra < bucket && bucket < window) {
		t.Errorf("rows not sorted fastest first:\n%s", md)
	}
	if !strings.Contains(md, "load average (1 min) 7.5 before") && !strings.Contains(md, "Load average (1 min) 7.5 before the run and 8.1 after it: the machine was shared") {
		t.Errorf("header does not give the load:\n%s", md[:400])
	}
	// Every result the figures quote is a cell of the report.
	for _, l := range strings.Split(fig, "\n") {
		c := strings.Split(l, " | ")
		if len(c) != 3 || strings.HasPrefix(l, "| comparison") {
			continue
		}
		cell := c[1]
		if !strings.Contains(md, "| "+cell+" |") {
			t.Errorf("figures quote %q, not in the report", cell)
		}
	}
	if !strings.Contains(fig, "cellrate gcra, admitting, vs x/time/rate | 1.99x (1.96-2.02)") || !strings.Contains(fig, "cellrate keyed vs sethvargo/go-limiter, 1,000 keys | 3.0") {
		t.Errorf("figures:\n%s", fig)
	}
	charts := 0
	for name, b := range files {
		if !strings.HasSuffix(name, ".png") {
			continue
		}
		charts++
		cfg, err := png.DecodeConfig(bytes.NewReader(b))
		if err != nil || cfg.Width != 800 {
			t.Errorf("%s: %v, %d px wide", name, err, cfg.Width)
		}
		if !strings.Contains(md+fig, name) {
			t.Errorf("%s is shown nowhere", name)
		}
	}
	if charts != 3 { // limiters, keyed, http-added: the groups that ran
		t.Errorf("%d charts", charts)
	}
}

func TestSplice(t *testing.T) {
	readme := []byte("# x\n\n" + beginMarker + "old figures\n" + endMarker + "after\n")
	out, err := splice(readme, []byte("new\n"))
	if err != nil || string(out) != "# x\n\n"+beginMarker+"new\n"+endMarker+"after\n" {
		t.Fatalf("splice: %q, %v", out, err)
	}
	if b, ok := block(out); !ok || string(b) != "new\n" {
		t.Fatalf("block: %q", b)
	}
	if _, err := splice([]byte(endMarker+beginMarker), nil); err == nil {
		t.Fatal("markers out of order accepted")
	}
}

// TestCommittedReportAgrees: the committed report is what its own
// results.json renders to, and the README's figures block is the
// report's figures.md, byte for byte: no figure is typed in by hand.
func TestCommittedReportAgrees(t *testing.T) {
	dir := filepath.Join("..", "..", "report")
	js, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := run(t.Context(), options{in: filepath.Join(dir, "results.json"), out: out}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"README.md", "figures.md", "results.json"} {
		want, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(filepath.Join(out, name))
		if !bytes.Equal(got, want) {
			t.Errorf("report/%s is not what results.json renders to (make bench writes both)", name)
		}
	}
	_ = js
	readme, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	fig, _ := os.ReadFile(filepath.Join(dir, "figures.md"))
	b, ok := block(readme)
	if !ok || !bytes.Equal(b, fig) {
		t.Error("README.md's figures block differs from bench/report/figures.md: run make bench (or go run ./cmd/report -in report/results.json -readme ../README.md)")
	}
	files, _ := os.ReadDir(out)
	for _, f := range files {
		if strings.HasSuffix(f.Name(), ".png") {
			if _, err := os.Stat(filepath.Join(dir, f.Name())); err != nil {
				t.Errorf("chart %s is not committed", f.Name())
			}
		}
	}
}
