// Command report runs the bench module's comparisons and accuracy
// schedules and writes what they found into the output directory: a
// Markdown report (README.md), the per-round measurements it was made from
// (results.json), a chart per question (PNG), and the README fragment
// (figures.md) that the repository's README quotes between its markers;
// with -readme it also rewrites that block of the README.
//
// Every comparison is paired (package paired): ours and the baseline run
// in alternating turns of a few milliseconds, timed by CPU time, in each
// of several fresh processes one after another (the command runs itself
// as each), and the report gives each ratio with the 95% interval a rerun
// lands in and says when the interval cannot tell the two apart. With
// -agree it counts how many figures of a rerun fall within a report's
// intervals.
//
// The report is written into a fresh hidden directory beside the output
// directory and moved into its place only once every file is written: a
// run that fails or is interrupted leaves the old report (and the README)
// as they were.
//
// Run it from the bench module's directory:
//
//	go run ./cmd/report -readme ../README.md   # full (make bench)
//	go run ./cmd/report -quick -out out/quick  # make bench-quick
//	go run ./cmd/report -in report/results.json -out /tmp/r  # re-render
//	go run ./cmd/report -agree report/results.json out/rerun/results.json
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
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
	quick := flag.Bool("quick", false, "fewer and shorter rounds, smaller schedules")
	flag.StringVar(&o.out, "out", "report", "output directory, replaced as a whole once the report is written")
	flag.StringVar(&o.in, "in", "", "re-render this saved results.json instead of measuring")
	flag.StringVar(&o.readme, "readme", "", "rewrite the figures block of this README from the report")
	flag.BoolVar(&o.http, "http", true, "run the sections over real loopback connections (vegeta) and the memory run")
	flag.BoolVar(&o.conc, "conc", true, "run the adaptive concurrency bed")
	agree := flag.Bool("agree", false, "compare two results.json, named as arguments: how many of the second's figures fall within the first's intervals")
	workerCfg := flag.String(workerFlag, "", "(internal) measure every pair once, with this config, as one of the run's processes")
	proc := flag.Int("proc", 0, "(internal) with -"+workerFlag+": which process this is")
	procs := flag.Int("procs", 0, "measure each pair in this many processes instead of the mode's count (fewer is faster, its intervals wider; 1 gives intervals within one process only)")
	flag.Parse()
	o.cfg = full
	if *quick {
		o.cfg = quickCfg
	}
	if *procs > 0 {
		o.cfg.Procs = *procs
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch {
	case *workerCfg != "":
		err = worker(ctx, *workerCfg, *proc)
	case *agree:
		if flag.NArg() != 2 {
			log.Fatal("-agree takes two results.json: the report's and the rerun's")
		}
		err = agreeFiles(os.Stdout, flag.Arg(0), flag.Arg(1))
	default:
		err = run(ctx, o, os.Stdout)
	}
	if err != nil {
		stop()
		if errors.Is(err, context.Canceled) {
			log.Fatalf("interrupted: %s is unchanged", o.out)
		}
		log.Fatal(err)
	}
}

type options struct {
	out, in, readme string
	http, conc      bool
	cfg             config
}

// config sizes a run.
type config struct {
	Quick bool `json:"quick"`
	// Procs is how many processes measure each pair, one after another
	// (in results.json, how many did); Rounds and Turn are each pair's
	// paired.Config in each of them. Budget is the time past which no
	// further process starts once there are minProcs.
	Procs  int           `json:"procs,omitempty"`
	Budget time.Duration `json:"budget,omitempty"`
	Rounds int           `json:"rounds"`
	Turn   time.Duration `json:"turn"`
	// KeyCounts are the keyed sections' key populations; Requests the
	// accuracy schedules' length.
	KeyCounts []int `json:"key_counts"`
	Requests  int   `json:"requests"`
}

// full's budget leaves room in make bench's ten minutes for the sections
// that follow the paired ones (the loopback runs, the concurrency bed's
// three minutes).
var (
	full     = config{Procs: 5, Budget: 5*time.Minute + 30*time.Second, Rounds: 6, Turn: 6 * time.Millisecond, KeyCounts: []int{1000, 1_000_000}, Requests: 200_000}
	quickCfg = config{Quick: true, Procs: 4, Budget: 2 * time.Minute, Rounds: 4, Turn: 2 * time.Millisecond, KeyCounts: []int{1000, 100_000}, Requests: 20_000}
)

// results is everything a report is rendered from; results.json holds it.
type results struct {
	Config  config       `json:"config"`
	Machine machine      `json:"machine"`
	Groups  []group      `json:"groups"`
	Acc     []accRow     `json:"accuracy"`
	HTTP    *httpResults `json:"http,omitempty"`
	Conc    *concResults `json:"concurrency,omitempty"`
}

// machine is what the run ran on, and when.
type machine struct {
	Date       string `json:"date"`
	Go         string `json:"go"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	CPU        string `json:"cpu"`
	CPUs       int    `json:"cpus"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	// LoadBefore and LoadAfter are the 1-minute load averages around the
	// run: other work on the machine, which the pairing is there for.
	LoadBefore string `json:"load_before"`
	LoadAfter  string `json:"load_after"`
	Took       string `json:"took"`
}

// run measures (or reads -in), renders the report into a fresh directory
// beside o.out, moves it into place and, with -readme, splices the
// figures into the README. Any error, or ctx ending, leaves o.out and the
// README untouched.
func run(ctx context.Context, o options, stdout io.Writer) error {
	var res results
	if o.in != "" {
		b, err := os.ReadFile(o.in)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &res); err != nil {
			return fmt.Errorf("%s: %w", o.in, err)
		}
	} else {
		var err error
		if res, err = measureAll(ctx, o); err != nil {
			return err
		}
	}
	files, err := render(res)
	if err != nil {
		return err
	}
	var readme []byte
	if o.readme != "" {
		old, err := os.ReadFile(o.readme)
		if err != nil {
			return err
		}
		if readme, err = splice(old, files["figures.md"]); err != nil {
			return fmt.Errorf("%s: %w", o.readme, err)
		}
	}
	err = publish(ctx, o.out, func(dir string) error {
		for name, b := range files {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if readme != nil {
		if err := os.WriteFile(o.readme, readme, 0o644); err != nil {
			return err
		}
	}
	text(stdout, res)
	fmt.Fprintf(stdout, "\nwrote %s/README.md, results.json, figures.md and the charts\n", o.out)
	return nil
}

// measureAll runs every section.
func measureAll(ctx context.Context, o options) (results, error) {
	start := time.Now()
	res := results{Config: o.cfg, Machine: machine{
		Date: start.UTC().Format("2006-01-02"), Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH,
		CPU: cpuModel(), CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), LoadBefore: loadavg(),
	}}
	log.Printf("%d processes of %d rounds of %v turns a pair, GOMAXPROCS %d, %d usable CPUs, load average %s",
		o.cfg.Procs, o.cfg.Rounds, o.cfg.Turn, res.Machine.GOMAXPROCS, res.Machine.CPUs, res.Machine.LoadBefore)
	work, err := workers(o.cfg)
	if err != nil {
		return res, err
	}
	if res.Groups, res.Config.Procs, err = runProcs(ctx, o.cfg, work); err != nil {
		return res, err
	}
	res.Acc = accuracy(o.cfg.Requests)
	if o.http {
		if res.HTTP, err = runHTTPSection(o.cfg.Quick); err != nil {
			return res, fmt.Errorf("HTTP middleware: %w", err)
		}
	}
	if o.conc && ctx.Err() == nil {
		if res.Conc, err = runConcSection(o.cfg.Quick); err != nil {
			return res, fmt.Errorf("adaptive concurrency bed: %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	res.Machine.LoadAfter = loadavg()
	res.Machine.Took = time.Since(start).Round(time.Second).String()
	log.Printf("measured in %s", res.Machine.Took)
	return res, nil
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

// accuracy runs every schedule through every implementation that denies.
func accuracy(requests int) []accRow {
	var rows []accRow
	for _, s := range bench.Schedules(requests) {
		for _, im := range bench.Impls() {
			if im.Blocks || !im.Takes(float64(s.Rate), s.Burst) {
				continue
			}
			rows = append(rows, accRow{s.Name, labelOf(im.Name), s.Run(im.New(float64(s.Rate), s.Burst))})
		}
	}
	return rows
}

type accRow struct {
	Sched string `json:"schedule"`
	Impl  string `json:"impl"`
	bench.Outcome
}

func (r accRow) ratio() float64 { return float64(r.Admitted) / float64(r.Exact) }

// cells returns the row as table cells.
func (r accRow) cells() []string {
	excess := "0"
	if r.Excess > 0 {
		excess = fmt.Sprintf("%.2f", r.Excess)
	}
	return []string{r.Impl, r.Sched, fmt.Sprint(r.Admitted), fmt.Sprint(r.Exact), fmt.Sprintf("%.4f", r.ratio()), excess}
}

// blocking names the implementations left out of the accuracy runs.
func blocking() string {
	var names []string
	for _, im := range bench.Impls() {
		if im.Blocks {
			names = append(names, labelOf(im.Name))
		}
	}
	return strings.Join(names, ", ")
}
