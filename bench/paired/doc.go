// Package paired measures two implementations of one operation against
// each other on a machine that other work shares, and says how sure the
// comparison is.
//
// The two run in turns of a few milliseconds each (a round is one turn of
// each, in alternating order), in one process, so that a burst of other
// load lands on both rather than on one. Each turn is timed by the CPU
// time the measuring threads used (clock_gettime's thread or process CPU
// clock, where the system has one) as well as by the wall clock: CPU time
// does not count the time the threads waited for a CPU while other
// processes ran. A comparison is then the per-round ratio (or difference)
// estimated with its confidence interval (Ratio, Diff): the
// Hodges-Lehmann estimate and the Wilcoxon signed-rank interval.
//
// Use Measure with a Config; see Estimate for the statistics.
package paired
