//go:build !race

package atomic128

func raceAcquire(*[2]uint64)      {}
func raceReleaseMerge(*[2]uint64) {}
