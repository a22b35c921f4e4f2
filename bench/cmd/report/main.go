// Command report runs the bench module's benchmarks and accuracy schedules
// and writes what they found: a ratio table on standard output, and in the
// output directory a Markdown report (README.md), the raw benchmark output
// (bench.txt, for benchstat) and charts of ns/op per implementation and
// goroutine count (limiters.svg, primitives.svg, keyed.svg); and the HTTP
// middleware section (http.go: vegeta against loopback servers, and the
// chart http.svg), unless -http=false.
//
// The report is written into a fresh hidden directory beside the output
// directory and moved into its place only once every file is written: a
// run that fails or is interrupted leaves the old report as it was. The
// header names the CPU model, the CPUs the process may use and GOMAXPROCS,
// and says which goroutine counts exceed the CPUs.
//
// The report's sections (sections.go) say which benchmarks go where; its
// doc says how to add one.
//
// Run it from the bench module's directory:
//
//	go run ./cmd/report           # full: -count 5 -benchtime 150ms
//	go run ./cmd/report -quick    # under two minutes
//	go run ./cmd/report -in bench.txt   # re-render from saved output
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/cellrate/cellrate/bench"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("report: ")
	var o options
	quick := flag.Bool("quick", false, "short benchmark times, one count, smaller schedules")
	flag.StringVar(&o.out, "out", "report", "output directory, replaced as a whole once the report is written")
	flag.StringVar(&o.in, "in", "", "parse this saved `go test -bench` output instead of running the benchmarks")
	flag.StringVar(&o.pattern, "bench", ".", "benchmark regexp")
	flag.StringVar(&o.format, "format", "svg", "chart format: svg or png")
	flag.BoolVar(&o.http, "http", true, "run the HTTP middleware section (vegeta against loopback servers); never with -in")
	flag.Parse()
	if o.format != "svg" && o.format != "png" {
		log.Fatalf("-format %q: want svg or png", o.format)
	}
	o.cfg = config{count: 5, benchtime: "150ms", requests: 200_000}
	if *quick {
		o.cfg = config{count: 1, benchtime: "100ms", requests: 20_000, quick: true}
	}
	o.cfg.command = fmt.Sprintf("`go test -run '^$' -bench '%s' -benchmem -benchtime %s .`, run %d time(s) over (one binary, rounds in turn)", o.pattern, o.cfg.benchtime, o.cfg.count)

	// An interrupt stops the benchmarks and leaves the output directory
	// as it was (run writes the report beside it and moves it in last).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, os.Stdout); err != nil {
		stop()
		if errors.Is(err, context.Canceled) {
			log.Fatalf("interrupted: %s is unchanged", o.out)
		}
		log.Fatal(err) // after run's deferred clean-ups
	}
}

type options struct {
	out, in, pattern, format string
	http                     bool
	cfg                      config
}

// run makes the report: it runs the benchmarks (or reads -in), parses
// them, runs the accuracy schedules, writes every file of the report into
// a fresh directory beside o.out and only then moves it to o.out. Any
// error, or ctx ending, leaves o.out untouched.
func run(ctx context.Context, o options, stdout io.Writer) error {
	var raw []byte
	if o.in != "" {
		var err error
		if raw, err = os.ReadFile(o.in); err != nil {
			return err
		}
	} else {
		before := loadavg()
		var err error
		if raw, err = runBenchmarks(ctx, o.pattern, o.cfg); err != nil {
			return err
		}
		raw = append(machineLines(raw, before), raw...)
		raw = append(raw, "loadavg-after: "+loadavg()+"\n"...)
	}
	res, err := parse(raw)
	if err != nil {
		return fmt.Errorf("parsing the benchmark output: %w", err)
	}
	cfg := o.cfg
	cfg.loadBefore, cfg.loadAfter = res.loadBefore, res.loadAfter
	acc := accuracy(cfg.requests)
	if err := ctx.Err(); err != nil {
		return err
	}
	var hr *httpResults
	if o.http && o.in == "" {
		if hr, err = runHTTPSection(cfg.quick); err != nil {
			return fmt.Errorf("HTTP middleware: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	err = publish(ctx, o.out, func(dir string) error {
		if err := os.WriteFile(filepath.Join(dir, "bench.txt"), raw, 0o644); err != nil {
			return err
		}
		tabs := res.tables(baseline)
		for _, s := range all(tabs) {
			if s.chart == "" {
				continue
			}
			if err := render(res, s, s.tables(tabs), filepath.Join(dir, s.chart+"."+o.format)); err != nil {
				return err
			}
		}
		var md bytes.Buffer
		markdown(&md, res, acc, cfg, o.format)
		if hr != nil {
			if err := hr.chart(filepath.Join(dir, "http."+o.format)); err != nil {
				return err
			}
			md.WriteString("\n")
			hr.markdown(&md, o.format)
		}
		return os.WriteFile(filepath.Join(dir, "README.md"), md.Bytes(), 0o644)
	})
	if err != nil {
		return err
	}
	text(stdout, res, acc)
	if hr != nil {
		fmt.Fprintln(stdout)
		hr.text(stdout)
	}
	fmt.Fprintf(stdout, "\nwrote %s/README.md, %s/bench.txt and the charts\n", o.out, o.out)
	return nil
}

// publish calls fill with a fresh directory beside out, then puts that
// directory in out's place: out holds either the whole old report or the
// whole new one, never a mix. If fill fails or ctx ends first, the fresh
// directory is removed and out is left as it was.
func publish(ctx context.Context, out string, fill func(dir string) error) (err error) {
	out = filepath.Clean(out)
	parent, base := filepath.Split(out)
	if parent == "" {
		parent = "."
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	// Hidden, and ignored by .gitignore, so that even a killed run
	// leaves git status clean.
	tmp, err := os.MkdirTemp(parent, "."+base+".tmp-")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if err := fill(tmp); err != nil {
		return fmt.Errorf("writing the report (%s is unchanged): %w", out, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w (%s is unchanged)", err, out)
	}
	old := tmp + ".old"
	switch err := os.Rename(out, old); {
	case errors.Is(err, os.ErrNotExist):
		return os.Rename(tmp, out)
	case err != nil:
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		if err2 := os.Rename(old, out); err2 != nil {
			return fmt.Errorf("%w; the old report is in %s", err, old)
		}
		return err
	}
	return os.RemoveAll(old)
}

// machineLines returns the configuration lines (benchfmt "key: value")
// that record what the benchmarks ran on beyond what go test prints: the
// load average before the run, GOMAXPROCS, the CPUs the process may use
// and, when go test did not print it, the CPU model. The benchmark binary
// inherits this process's affinity mask and environment, so they are the
// same there.
func machineLines(raw []byte, loadBefore string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "loadavg-before: %s\n", loadBefore)
	fmt.Fprintf(&b, "gomaxprocs: %d\n", runtime.GOMAXPROCS(0))
	fmt.Fprintf(&b, "usable-cpus: %d\n", runtime.NumCPU())
	if !bytes.Contains(raw, []byte("\ncpu: ")) && !bytes.HasPrefix(raw, []byte("cpu: ")) {
		if m := cpuModel(); m != "" {
			fmt.Fprintf(&b, "cpu: %s\n", m)
		}
	}
	return b.Bytes()
}

// cpuModel reads the CPU model from /proc/cpuinfo ("" where there is none).
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && (strings.TrimSpace(k) == "model name" || strings.TrimSpace(k) == "Model") {
			return strings.TrimSpace(v)
		}
	}
	return ""
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
func runBenchmarks(ctx context.Context, pattern string, cfg config) ([]byte, error) {
	start := time.Now()
	dir, err := os.MkdirTemp("", "cellrate-bench")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "bench.test")
	build := exec.CommandContext(ctx, "go", "test", "-c", "-o", bin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("go test -c: %w", err)
	}
	log.Printf("%s (GOMAXPROCS %d, %d usable CPUs)", cfg.command, runtime.GOMAXPROCS(0), runtime.NumCPU())
	var buf bytes.Buffer
	for round := range cfg.count {
		log.Printf("round %d of %d", round+1, cfg.count)
		cmd := exec.CommandContext(ctx, bin, "-test.run", "^$", "-test.bench", pattern, "-test.benchmem", "-test.benchtime", cfg.benchtime)
		cmd.Stdout = io.MultiWriter(&buf, os.Stderr)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("benchmarks: %w", err)
		}
	}
	log.Printf("benchmarks took %v", time.Since(start).Round(time.Second))
	return buf.Bytes(), nil
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
