package main

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// results holds parsed benchmark output.
type results struct {
	cpu, goos, goarch     string
	loadBefore, loadAfter string
	// procs is GOMAXPROCS during the run: the "gomaxprocs:" line the
	// report writes, else the -N suffix go test adds to every name (it
	// adds none when GOMAXPROCS is 1).
	procs int
	// usable is the number of CPUs the benchmark process could run on
	// (its affinity mask: runtime.NumCPU), from the "usable-cpus:" line;
	// 0 when the output does not say.
	usable int
	// samples maps a benchmark name, without the -GOMAXPROCS suffix, to
	// its ns/op samples; metrics to its last value of each other unit.
	samples map[string][]float64
	metrics map[string]map[string]float64
	// order keeps names in first-seen order.
	order []string
	// dups are the names go test gave to repeated sub-benchmarks
	// (g=1#01): left out of the tables, listed in the report.
	dups []string
}

// parse reads go test -bench output, with the configuration lines the
// report adds (benchfmt's "key: value"). It fails on a benchmark name
// whose goroutine count it cannot read, rather than let it reach a table
// or a chart.
func parse(raw []byte) (*results, error) {
	r := &results{samples: map[string][]float64{}, metrics: map[string]map[string]float64{}}
	suffix := 0 // the largest -N suffix seen, when there is no gomaxprocs line
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		for _, h := range []struct {
			prefix string
			dst    *string
		}{{"cpu: ", &r.cpu}, {"goos: ", &r.goos}, {"goarch: ", &r.goarch},
			{"loadavg-before: ", &r.loadBefore}, {"loadavg-after: ", &r.loadAfter}} {
			if v, ok := strings.CutPrefix(line, h.prefix); ok {
				*h.dst = strings.TrimSpace(v)
			}
		}
		for _, h := range []struct {
			prefix string
			dst    *int
		}{{"gomaxprocs: ", &r.procs}, {"usable-cpus: ", &r.usable}} {
			if v, ok := strings.CutPrefix(line, h.prefix); ok {
				n, err := strconv.Atoi(strings.TrimSpace(v))
				if err != nil || n < 1 {
					return nil, fmt.Errorf("configuration line %q: want a positive integer", line)
				}
				*h.dst = n
			}
		}
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name, p := trimProcs(strings.TrimPrefix(f[0], "Benchmark"), r.procs)
		suffix = max(suffix, p)
		b, ok, err := split(name)
		if err != nil {
			return nil, err
		}
		if ok && b.dup != "" {
			if !slices.Contains(r.dups, name) {
				r.dups = append(r.dups, name)
			}
			continue
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
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if r.procs == 0 {
		r.procs = max(suffix, 1)
	}
	if len(r.samples) == 0 {
		return nil, fmt.Errorf("no benchmark results")
	}
	return r, nil
}

// trimProcs removes the -N suffix go test appends to a benchmark's name
// when GOMAXPROCS N is above 1, and returns N (0 if there was none). When
// procs is known only -procs is removed; otherwise any trailing -digits.
func trimProcs(name string, procs int) (string, int) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || strings.Contains(name[i:], "/") {
		return name, 0
	}
	p, err := strconv.Atoi(name[i+1:])
	if err != nil || p < 1 || (procs > 0 && p != procs) {
		return name, 0
	}
	return name[:i], p
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

// A name splits as group/scenario.../impl/g=N, where go test may have
// added #NN to a repeated name (g=1#01).
type benchName struct {
	scenario, impl string
	g              int
	dup            string // the #NN go test added, or ""
}

// split parses a benchmark name (without its -GOMAXPROCS suffix). ok is
// false for a name not in the group/scenario/impl/g=N form; err is set
// for one whose last element starts with g= but is not g=N or g=N#NN
// with N a positive integer.
func split(name string) (benchName, bool, error) {
	p := strings.Split(name, "/")
	last := p[len(p)-1]
	v, isG := strings.CutPrefix(last, "g=")
	if !isG {
		return benchName{}, false, nil
	}
	if len(p) < 3 {
		return benchName{}, false, fmt.Errorf("benchmark %q: want group/scenario/implementation/g=N", name)
	}
	n, rest, repeated := strings.Cut(v, "#")
	dup := ""
	if repeated {
		dup = "#" + rest
		if _, err := strconv.ParseUint(rest, 10, 32); err != nil {
			return benchName{}, false, fmt.Errorf("benchmark %q: %q is not a goroutine count (g=N, or g=N#NN for a repeated name)", name, last)
		}
	}
	g, err := strconv.Atoi(n)
	if err != nil || g < 1 || n != strconv.Itoa(g) {
		return benchName{}, false, fmt.Errorf("benchmark %q: %q is not a goroutine count (g=N with N a positive integer)", name, last)
	}
	return benchName{strings.Join(p[:len(p)-2], "/"), p[len(p)-2], g, dup}, true, nil
}

// table is one scenario: its implementations in first-seen order, its
// goroutine counts in ascending order, and the benchmark name for each.
type table struct {
	scenario, baseline string
	impls              []string
	gs                 []int
	name               map[key]string
}

type key struct {
	impl string
	g    int
}

// group is the first element of the scenario: BenchmarkX's X.
func (t *table) group() string {
	g, _, _ := strings.Cut(t.scenario, "/")
	return g
}

// tables groups the results by scenario, in first-seen order, each with
// its baseline (baseline(group), "" for none).
func (r *results) tables(baseline func(group string) string) []*table {
	var out []*table
	by := map[string]*table{}
	for _, n := range r.order {
		b, ok, _ := split(n) // parse has refused the names split cannot read
		if !ok {
			continue
		}
		t := by[b.scenario]
		if t == nil {
			t = &table{scenario: b.scenario, name: map[key]string{}}
			t.baseline = baseline(t.group())
			by[b.scenario] = t
			out = append(out, t)
		}
		if !slices.Contains(t.impls, b.impl) {
			t.impls = append(t.impls, b.impl)
		}
		if !slices.Contains(t.gs, b.g) {
			t.gs = append(t.gs, b.g)
		}
		t.name[key{b.impl, b.g}] = n
	}
	for _, t := range out {
		slices.Sort(t.gs)
	}
	return out
}

// cell returns the ns/op of impl at g and its ratio to the baseline.
func (r *results) cell(t *table, impl string, g int) (stat, float64, bool) {
	s := r.stat(t.name[key{impl, g}])
	if t.baseline == "" {
		return s, 0, false
	}
	base := r.stat(t.name[key{t.baseline, g}])
	if !s.ok || !base.ok {
		return s, 0, false
	}
	return s, s.median / base.median, true
}
