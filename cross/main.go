// Command cross is the cross-architecture harness behind `make cross` and
// `make vet-all`. It proves the module on every CPU path it has:
//
//   - go vet for every GOOS/GOARCH the module claims, with and without
//     purego, and GOAMD64=v1 and v3 (vet.go);
//   - every package's tests (go list ./... of each module, with -short),
//     built once per row of the matrix (matrix.go) and run on that row's
//     CPU: natively, under qemu-user on a chosen CPU model, or, for arm64
//     -race, in one qemu-system-aarch64 VM per CPU model (vm.go);
//   - the required-path check: a probe built like the tests prints
//     atomic128.Path() on the same CPU and must match the row's expected
//     path, which the tests also get as CELLRATE_EXPECT_PATH.
//
// It installs the Debian packages it lacks when run as root (deps.go), and
// prints a table: target, CPU model, path selected, race, tests passed,
// time. It exits 1 when anything failed, 2 when it could not run.
//
// It is a module of its own (like gen, stress and bench), so that the
// library's module holds only the library. Usage, from this directory:
//
//	go run . [-root ..] [-only vet|rows] [-rows arm64-*,386]
//	    [-module dir[:pattern]]... [-race-module dir[:pattern]]...
//	    [-env KEY=VALUE]... [-json file] [-work dir]
//
// -root is the main module's directory (default ".."), and relative module
// directories are taken from it. -module adds a module whose packages every
// row tests (default "."), -race-module one only the -race rows test (e.g.
// the stress module). The probe and the VM's init are built from this
// module (pathprobe/, vminit/).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// options is the harness's configuration and the state its rows share.
type options struct {
	ctx         context.Context
	root        string // the main module's directory
	self        string // this module's directory: pathprobe/ and vminit/
	work        string
	modules     []module
	raceModules []module
	env         []string // planted into every probe and test run
	testTimeout time.Duration
	vmTimeout   time.Duration
	vmParallel  int
	kernel      func() (string, error)
	vminit      func() (string, error)
}

// testEnv is the environment a row's probe and tests get beyond the host's.
func (o *options) testEnv(r row) []string {
	env := append([]string{"CELLRATE_EXPECT_PATH=" + r.Expect}, r.Env...)
	return append(env, o.env...)
}

// testArgs are the flags every test binary runs with.
func (o *options) testArgs() []string {
	return []string{"-test.short", "-test.v", "-test.count=1", "-test.paniconexit0",
		"-test.timeout=" + o.testTimeout.String()}
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

func main() {
	var mods, raceMods, env listFlag
	root := flag.String("root", "..", "the main module's `dir`; relative -module and -race-module directories start there")
	only := flag.String("only", "", `run only "vet" or only the matrix's "rows"`)
	sel := flag.String("rows", "", "comma-separated patterns of the rows to run (default all)")
	flag.Var(&mods, "module", "`dir[:pattern]` of a module every row tests (repeatable; default .)")
	flag.Var(&raceMods, "race-module", "`dir[:pattern]` of a module only -race rows test (repeatable)")
	flag.Var(&env, "env", "`KEY=VALUE` added to every probe and test run (repeatable)")
	jsonOut := flag.String("json", "", "write the rows' results as JSON to `file`")
	work := flag.String("work", "", "directory for binaries and logs (default a temporary one, removed if all passed)")
	install := flag.Bool("install", true, "install missing Debian packages when root")
	testTimeout := flag.Duration("test-timeout", 10*time.Minute, "time-out of each test binary")
	vmTimeout := flag.Duration("vm-timeout", 30*time.Minute, "time-out of each VM, boot to power-off")
	vmParallel := flag.Int("vm-parallel", 1, "test binaries a VM runs at a time (it has 2 CPUs); 1 keeps timing-sensitive tests calm")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	o := &options{ctx: ctx, env: env, testTimeout: *testTimeout, vmTimeout: *vmTimeout, vmParallel: *vmParallel}
	if len(mods) == 0 {
		mods = listFlag{"."}
	}
	for _, m := range mods {
		o.modules = append(o.modules, parseModule(m))
	}
	for _, m := range raceMods {
		o.raceModules = append(o.raceModules, parseModule(m))
	}
	os.Exit(run(o, *root, *only, *sel, *work, *install, *jsonOut))
}

// moduleDir returns the directory of the go.mod that governs dir.
func moduleDir(dir string) (string, error) {
	mod, err := goCmd(dir, os.Environ(), "env", "GOMOD")
	gomod := strings.TrimSpace(string(mod))
	if err == nil && (gomod == "" || gomod == os.DevNull) {
		err = fmt.Errorf("%s is in no module", dir)
	}
	if err != nil {
		return "", err
	}
	return filepath.Dir(gomod), nil
}

func run(o *options, root, only, sel, work string, install bool, jsonOut string) int {
	var err error
	if o.self, err = moduleDir("."); err != nil {
		fmt.Fprintln(os.Stderr, "cross: run from the cross module:", err)
		return 2
	}
	if o.root, err = moduleDir(root); err != nil {
		fmt.Fprintln(os.Stderr, "cross: -root:", err)
		return 2
	}
	for _, ms := range [][]module{o.modules, o.raceModules} {
		for i := range ms {
			if !filepath.IsAbs(ms[i].Dir) {
				ms[i].Dir = filepath.Join(o.root, ms[i].Dir)
			}
		}
	}
	if only != "" && only != "vet" && only != "rows" {
		fmt.Fprintf(os.Stderr, "cross: -only %q: want vet or rows\n", only)
		return 2
	}
	rs := selectRows(sel)
	if only != "vet" {
		if len(rs) == 0 {
			fmt.Fprintf(os.Stderr, "cross: no row matches %q\n", sel)
			return 2
		}
		if err := ensureDeps(rs, install); err != nil {
			fmt.Fprintln(os.Stderr, "cross:", err)
			return 2
		}
	}
	failed := false
	if only != "rows" {
		fmt.Fprintln(os.Stderr, "cross: go vet on every target")
		failed = !printVet(os.Stdout, vetAll(o.modules))
	}
	if only == "vet" {
		return exitCode(failed)
	}
	if o.work = work; work == "" {
		if o.work, err = os.MkdirTemp("", "cellrate-cross-"); err != nil {
			fmt.Fprintln(os.Stderr, "cross:", err)
			return 2
		}
	}
	o.kernel = sync.OnceValues(func() (string, error) { return fetchKernel(kernelCache()) })
	o.vminit = sync.OnceValues(func() (string, error) { return buildVMInit(o) })

	var results []*rowResult
	for _, r := range rs {
		res := runRow(o, r)
		results = append(results, res)
		failed = failed || !res.ok()
	}
	fmt.Println()
	printTable(os.Stdout, results)
	printFailedLogs(os.Stdout, results, 40)
	if jsonOut != "" {
		if err := writeJSON(jsonOut, results); err != nil {
			fmt.Fprintln(os.Stderr, "cross:", err)
			return 2
		}
	}
	passed := 0
	for _, r := range results {
		if r.ok() {
			passed++
		}
	}
	if work == "" && !failed {
		os.RemoveAll(o.work)
	} else {
		fmt.Printf("logs and binaries: %s\n", o.work)
	}
	fmt.Printf("cross: %d passed, %d failed\n", passed, len(results)-passed)
	return exitCode(failed)
}

func exitCode(failed bool) int {
	if failed {
		return 1
	}
	return 0
}

// runRow builds row r's probe and test binaries and runs them.
func runRow(o *options, r row) *rowResult {
	fmt.Fprintf(os.Stderr, "cross: %s: %s on %s, race %v\n", r.Name, r.target(), r.cpu(), r.Race)
	res := &rowResult{row: r}
	start := time.Now()
	bin := filepath.Join(o.work, r.Name, "bin")
	probe, err := buildProbe(r, o.self, bin)
	if err != nil {
		res.fail("build: %v", err)
		return res
	}
	mods := o.modules
	if r.Race {
		mods = append(mods[:len(mods):len(mods)], o.raceModules...)
	}
	pkgs, err := buildTests(r, mods, bin)
	if err != nil {
		res.fail("build: %v", err)
		return res
	}
	res.Build = time.Since(start)
	start = time.Now()
	if r.Runner == vm {
		runVM(o, r, probe, pkgs, res)
	} else {
		runUser(o, r, probe, pkgs, res)
	}
	res.Run = time.Since(start)
	res.checkPath()
	fmt.Fprintf(os.Stderr, "cross: %s: path %s, %d packages, %.1fs, ok %v\n", r.Name, res.Path, len(res.Pkgs), (res.Build + res.Run).Seconds(), res.ok())
	return res
}

// buildVMInit builds the VM's static init program.
func buildVMInit(o *options) (string, error) {
	out := filepath.Join(o.work, "vminit")
	env := append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	_, err := goCmd(o.self, env, "build", "-o", out, "./vminit")
	return out, err
}

// kernelCache is where downloaded kernels are kept between runs.
func kernelCache() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "cellrate-cross", "kernel")
}
