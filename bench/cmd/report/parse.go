package main

import (
	"bufio"
	"bytes"
	"slices"
	"strconv"
	"strings"
)

// results holds parsed benchmark output.
type results struct {
	cpu, goos, goarch     string
	loadBefore, loadAfter string
	procs                 int
	// samples maps a benchmark name, without the -GOMAXPROCS suffix, to
	// its ns/op samples; metrics to its last value of each other unit.
	samples map[string][]float64
	metrics map[string]map[string]float64
	// order keeps names in first-seen order.
	order []string
}

func parse(raw []byte) *results {
	r := &results{samples: map[string][]float64{}, metrics: map[string]map[string]float64{}}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		line := sc.Text()
		for _, h := range []struct {
			prefix string
			dst    *string
		}{{"cpu: ", &r.cpu}, {"goos: ", &r.goos}, {"goarch: ", &r.goarch},
			{"loadavg-before: ", &r.loadBefore}, {"loadavg-after: ", &r.loadAfter}} {
			if v, ok := strings.CutPrefix(line, h.prefix); ok {
				*h.dst = v
			}
		}
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := strings.TrimPrefix(f[0], "Benchmark")
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if p, err := strconv.Atoi(name[i+1:]); err == nil {
				name, r.procs = name[:i], p
			}
		}
		if _, seen := r.samples[name]; !seen {
			r.order = append(r.order, name)
			r.metrics[name] = map[string]float64{}
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			if f[i+1] == "ns/op" {
				r.samples[name] = append(r.samples[name], v)
			} else {
				r.metrics[name][f[i+1]] = v
			}
		}
	}
	if r.procs == 0 {
		r.procs = 1
	}
	return r
}

// stat is the median of a benchmark's samples and their spread: the
// largest distance of a sample from the median, relative to it.
type stat struct {
	median, spread float64
	n              int
	ok             bool
}

func (r *results) stat(name string) stat {
	s := slices.Clone(r.samples[name])
	if len(s) == 0 {
		return stat{}
	}
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	spread := max(m-s[0], s[len(s)-1]-m) / m
	return stat{m, spread, len(s), true}
}

// A name splits as group/scenario.../impl/g=N.
type benchName struct {
	scenario, impl, g string
}

func split(name string) (benchName, bool) {
	p := strings.Split(name, "/")
	if len(p) < 3 || !strings.HasPrefix(p[len(p)-1], "g=") {
		return benchName{}, false
	}
	return benchName{strings.Join(p[:len(p)-2], "/"), p[len(p)-2], p[len(p)-1]}, true
}

// table is one scenario: its implementations in first-seen order, its
// goroutine counts, and the benchmark name for each.
type table struct {
	scenario, baseline string
	impls, gs          []string
	name               map[[2]string]string
}

// baselines names what each group of benchmarks is compared against.
var baselines = map[string]string{
	"Limiter": "x-time-rate",
	"Counter": "sync-atomic",
	"Pair":    "mutex-pair",
	"Clock":   "time-now",
}

func (r *results) tables() []*table {
	var out []*table
	by := map[string]*table{}
	for _, n := range r.order {
		b, ok := split(n)
		if !ok {
			continue
		}
		t := by[b.scenario]
		if t == nil {
			group, _, _ := strings.Cut(b.scenario, "/")
			t = &table{scenario: b.scenario, baseline: baselines[group], name: map[[2]string]string{}}
			by[b.scenario] = t
			out = append(out, t)
		}
		if !slices.Contains(t.impls, b.impl) {
			t.impls = append(t.impls, b.impl)
		}
		if !slices.Contains(t.gs, b.g) {
			t.gs = append(t.gs, b.g)
		}
		t.name[[2]string{b.impl, b.g}] = n
	}
	return out
}

// cell returns the ns/op of impl at g and its ratio to the baseline.
func (r *results) cell(t *table, impl, g string) (stat, float64, bool) {
	s := r.stat(t.name[[2]string{impl, g}])
	base := r.stat(t.name[[2]string{t.baseline, g}])
	if !s.ok || !base.ok {
		return s, 0, false
	}
	return s, s.median / base.median, true
}
