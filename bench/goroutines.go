package bench

// GoroutineCounts returns the goroutine counts every benchmark runs at
// with GOMAXPROCS procs: 1 (a plain loop), procs (RunParallel with one
// goroutine per P) and 8·procs (eight per P), ascending and without
// repeats. With procs = 1 that is [1 8], not [1 1 8]: a repeated count
// would run one benchmark twice under one name, which go test renames
// g=1#01. A procs below 1 counts as 1.
func GoroutineCounts(procs int) []int {
	procs = max(procs, 1)
	if procs == 1 {
		return []int{1, 8}
	}
	return []int{1, procs, 8 * procs}
}

// Parallelism is the testing.B.SetParallelism argument that runs g
// goroutines under RunParallel with GOMAXPROCS procs (RunParallel starts
// parallelism·GOMAXPROCS goroutines). g must be one of
// GoroutineCounts(procs) other than 1.
func Parallelism(g, procs int) int {
	return max(g/max(procs, 1), 1)
}
