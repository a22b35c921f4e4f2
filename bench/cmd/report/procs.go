package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"os/exec"
	"time"

	"github.com/cellrate/cellrate/bench/paired"
)

// Each comparison is measured in several processes, one after another,
// each running every pair for cfg.Rounds rounds: what differs between
// processes (the heap's layout and size, the scheduler's state, the
// load and clock speed of the moment) then shows in the spread between
// them, and the interval (paired.RatioRuns) holds it. The report command
// runs itself as each of these workers (-worker) and pools what they
// print.

// workerFlag names the flag that makes the command one worker process:
// its value is the config, as JSON.
const workerFlag = "worker"

// worker measures every pair once, as process proc of cfg.Procs, and
// writes the groups to stdout as JSON.
func worker(ctx context.Context, cfgJSON string, proc int) error {
	var cfg config
	if err := json.Unmarshal([]byte(cfgJSON), &cfg); err != nil {
		return fmt.Errorf("-%s: %w", workerFlag, err)
	}
	log.SetPrefix(fmt.Sprintf("report [process %d of %d]: ", proc+1, cfg.Procs))
	gs, err := measure(ctx, plan(cfg), cfg)
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(gs)
}

// plan is every group the workers measure.
func plan(cfg config) []groupSpec {
	specs := planLimiters()
	specs = append(specs, planKeyed(cfg.KeyCounts)...)
	specs = append(specs, planStores()...)
	return append(specs, planHTTP()...)
}

// minProcs is the fewest processes a run stops at when it is over its
// budget: two leave a single degree of freedom, whose t quantile (12.7)
// makes every interval useless.
const minProcs = 3

// runProcs runs up to cfg.Procs workers in turn, each a fresh process of
// this command, and pools their groups. On a machine so loaded that
// another process would take the run past cfg.Budget (judged by the
// slowest so far), it stops after minProcs: the intervals then come
// from fewer processes and are wider, as they should be. It returns the
// processes run.
func runProcs(ctx context.Context, cfg config, work func(ctx context.Context, p int) ([]group, error)) ([]group, int, error) {
	var out []group
	begin := time.Now()
	var slowest time.Duration
	n := 0
	for p := range cfg.Procs {
		if p >= minProcs && cfg.Budget > 0 && time.Since(begin)+slowest > cfg.Budget {
			log.Printf("stopping at %d processes of %d: another would take the run past %v", p, cfg.Procs, cfg.Budget)
			break
		}
		start := time.Now()
		gs, err := work(ctx, p)
		if err != nil {
			return nil, 0, fmt.Errorf("process %d of %d: %w", p+1, cfg.Procs, err)
		}
		if out, err = pool(out, gs, p); err != nil {
			return nil, 0, err
		}
		n++
		slowest = max(slowest, time.Since(start))
		log.Printf("process %d of %d took %v", p+1, cfg.Procs, time.Since(start).Round(time.Second))
	}
	for i := range out {
		for j := range out[i].Rows {
			r := &out[i].Rows[j]
			r.Ours.AllocsPerOp /= float64(n)
			r.Base.AllocsPerOp /= float64(n)
		}
	}
	return out, n, nil
}

// workers returns what runs process p: this command with -worker, its
// groups read from its standard output.
func workers(cfg config) (func(ctx context.Context, p int) ([]group, error), error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	js, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, p int) ([]group, error) { return runWorker(ctx, exe, string(js), p) }, nil
}

func runWorker(ctx context.Context, exe, cfg string, p int) ([]group, error) {
	cmd := exec.CommandContext(ctx, exe, "-"+workerFlag+"="+cfg, fmt.Sprintf("-proc=%d", p))
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	var gs []group
	err := json.Unmarshal(stdout.Bytes(), &gs)
	return gs, err
}

// pool appends process p's groups to those of the processes before it:
// the same groups, rows and labels in the same order, their rounds
// concatenated and each marked with p; allocations per operation are
// summed (runProcs divides them by the count).
func pool(into, gs []group, p int) ([]group, error) {
	if into == nil {
		into = make([]group, len(gs))
		for i, g := range gs {
			into[i] = g
			into[i].Rows = make([]row, len(g.Rows))
			for j, r := range g.Rows {
				into[i].Rows[j] = row{Label: r.Label, Ours: emptyLike(r.Ours), Base: emptyLike(r.Base)}
			}
		}
	}
	if len(gs) != len(into) {
		return nil, fmt.Errorf("process %d measured %d groups, the first %d", p+1, len(gs), len(into))
	}
	for i, g := range gs {
		in := &into[i]
		if g.ID != in.ID || g.G != in.G || len(g.Rows) != len(in.Rows) {
			return nil, fmt.Errorf("process %d measured %s (g=%d, %d rows) where the first measured %s (g=%d, %d rows)",
				p+1, g.ID, g.G, len(g.Rows), in.ID, in.G, len(in.Rows))
		}
		for j, r := range g.Rows {
			to := &in.Rows[j]
			if r.Label != to.Label {
				return nil, fmt.Errorf("process %d: %s row %d is %q, the first's %q", p+1, g.ID, j, r.Label, to.Label)
			}
			n := len(r.Ours.Wall)
			if len(r.Base.Wall) != n || len(r.Ours.CPU) != len(r.Base.CPU) {
				return nil, fmt.Errorf("process %d: %s, %s: unpaired rounds", p+1, g.ID, r.Label)
			}
			appendSample(&to.Ours, r.Ours)
			appendSample(&to.Base, r.Base)
			for range n {
				to.Proc = append(to.Proc, p)
			}
		}
	}
	return into, nil
}

func emptyLike(s paired.Sample) paired.Sample { return paired.Sample{Name: s.Name} }

func appendSample(to *paired.Sample, s paired.Sample) {
	if s.CPU != nil {
		to.CPU = append(to.CPU, s.CPU...)
	}
	to.Wall = append(to.Wall, s.Wall...)
	to.AllocsPerOp += s.AllocsPerOp
}

// procs returns the number of processes r's rounds came from: 1 for a
// run that did not record them.
func (r row) procs() int {
	n := 1
	for _, p := range r.Proc {
		n = max(n, p+1)
	}
	return n
}

// split returns v, one figure per round, as one slice per process.
func (r row) split(v []float64) [][]float64 {
	out := make([][]float64, r.procs())
	for i, x := range v {
		p := 0
		if i < len(r.Proc) {
			p = r.Proc[i]
		}
		out[p] = append(out[p], x)
	}
	return out
}
