// Command pathprobe prints the name of the implementation atomic128 selected
// on the CPU it runs on, alone on a line. The cross harness builds it like the
// tests of each target and runs it on the same CPU model, for its table and
// its required-path check.
package main

import (
	"fmt"

	"github.com/cellrate/cellrate/atomic128"
)

func main() { fmt.Println(atomic128.Path()) }
