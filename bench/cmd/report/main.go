// Command report runs the bench module's benchmarks and accuracy schedules
// and writes what they found: a ratio table on standard output, and in the
// output directory a Markdown report (README.md), the raw benchmark output
// (bench.txt, for benchstat) and charts of ns/op per implementation and
// goroutine count (limiters.svg, primitives.svg).
//
// Run it from the bench module's directory:
//
//	go run ./cmd/report           # full: -count 5 -benchtime 150ms
//	go run ./cmd/report -quick    # under two minutes
//	go run ./cmd/report -in bench.txt   # re-render from saved output
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/cellrate/cellrate/bench"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("report: ")
	quick := flag.Bool("quick", false, "short benchmark times, one count, smaller schedules")
	out := flag.String("out", "report", "output directory")
	in := flag.String("in", "", "parse this saved `go test -bench` output instead of running the benchmarks")
	pattern := flag.String("bench", ".", "benchmark regexp")
	format := flag.String("format", "svg", "chart format: svg or png")
	flag.Parse()

	cfg := config{count: 5, benchtime: "150ms", requests: 200_000}
	if *quick {
		cfg = config{count: 1, benchtime: "100ms", requests: 20_000, quick: true}
	}
	cfg.command = fmt.Sprintf("`go test -run '^$' -bench '%s' -benchmem -benchtime %s .`, run %d time(s) over (one binary, rounds in turn)", *pattern, cfg.benchtime, cfg.count)

	var raw []byte
	if *in != "" {
		var err error
		if raw, err = os.ReadFile(*in); err != nil {
			log.Fatal(err)
		}
	} else {
		before := loadavg()
		raw = runBenchmarks(*pattern, cfg)
		// benchfmt configuration lines, so that -in and benchstat read them.
		raw = append([]byte("loadavg-before: "+before+"\n"), raw...)
		raw = append(raw, "loadavg-after: "+loadavg()+"\n"...)
	}
	res := parse(raw)
	cfg.loadBefore, cfg.loadAfter = res.loadBefore, res.loadAfter
	if len(res.samples) == 0 {
		log.Fatal("no benchmark results")
	}
	acc := accuracy(cfg.requests)

	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	if *in == "" {
		write(filepath.Join(*out, "bench.txt"), raw)
	}
	for _, c := range charts {
		if err := c.render(res, filepath.Join(*out, c.file+"."+*format)); err != nil {
			log.Fatal(err)
		}
	}
	var md bytes.Buffer
	markdown(&md, res, acc, cfg)
	write(filepath.Join(*out, "README.md"), md.Bytes())
	text(os.Stdout, res, acc)
	fmt.Printf("\nwrote %s/README.md, %s/bench.txt and the charts\n", *out, *out)
}

type config struct {
	count     int
	benchtime string
	requests  int
	quick     bool
	command   string
	// loadBefore and loadAfter are the 1-minute load averages around the
	// run ("" where the system does not tell): other work on the machine
	// shows up as spread in the results.
	loadBefore, loadAfter string
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// runBenchmarks builds the benchmark binary once and runs all the
// benchmarks count times over, one round after another, so that a burst
// of other load on the machine lands on every implementation of a round
// rather than on all the runs of one. It echoes the output to standard
// error as it comes.
func runBenchmarks(pattern string, cfg config) []byte {
	start := time.Now()
	dir, err := os.MkdirTemp("", "cellrate-bench")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "bench.test")
	build := exec.Command("go", "test", "-c", "-o", bin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		log.Fatalf("go test -c: %v", err)
	}
	log.Printf("%s (GOMAXPROCS %d)", cfg.command, runtime.GOMAXPROCS(0))
	var buf bytes.Buffer
	for round := range cfg.count {
		log.Printf("round %d of %d", round+1, cfg.count)
		cmd := exec.Command(bin, "-test.run", "^$", "-test.bench", pattern, "-test.benchmem", "-test.benchtime", cfg.benchtime)
		cmd.Stdout = io.MultiWriter(&buf, os.Stderr)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			log.Fatalf("benchmarks: %v", err)
		}
	}
	log.Printf("benchmarks took %v", time.Since(start).Round(time.Second))
	return buf.Bytes()
}

func write(name string, b []byte) {
	if err := os.WriteFile(name, b, 0o644); err != nil {
		log.Fatal(err)
	}
}

// accuracy runs every schedule through every implementation that denies.
func accuracy(requests int) []accRow {
	var rows []accRow
	for _, s := range bench.Schedules(requests) {
		for _, im := range bench.Impls() {
			if im.Blocks || !im.Takes(float64(s.Rate), s.Burst) {
				continue
			}
			rows = append(rows, accRow{s, im.Name, s.Run(im.New(float64(s.Rate), s.Burst))})
		}
	}
	return rows
}

type accRow struct {
	sched bench.Schedule
	impl  string
	bench.Outcome
}

func (r accRow) ratio() float64 { return float64(r.Admitted) / float64(r.Exact) }

// cells returns the row as table cells.
func (r accRow) cells() []string {
	excess := "0"
	if r.Excess > 0 {
		excess = fmt.Sprintf("%.2f", r.Excess)
	}
	return []string{r.impl, r.sched.Name, fmt.Sprint(r.Admitted), fmt.Sprint(r.Exact), fmt.Sprintf("%.4f", r.ratio()), excess}
}

// blocking names the implementations left out of the accuracy runs.
func blocking() string {
	var names []string
	for _, im := range bench.Impls() {
		if im.Blocks {
			names = append(names, im.Name)
		}
	}
	return strings.Join(names, ", ")
}
