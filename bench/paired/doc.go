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
// That interval holds the noise between one process's rounds only. A
// fresh process at another moment (another heap, other hash seeds, other
// load and clock speed) moves all its rounds alike, so a rerun can land
// well outside it. Measured in several processes, a comparison is
// estimated over them (RatioRuns, DiffRuns): the interval is where a
// rerun of as many processes lands, at the stated level.
//
// Use Measure with a Config; see Estimate and Runs for the statistics.
package paired
