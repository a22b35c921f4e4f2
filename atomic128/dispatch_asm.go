//go:build gc && !purego && (amd64 || arm64)

package atomic128

import (
	"unsafe"

	// The dispatch routines jump to its routines: the import links them in.
	_ "github.com/cellrate/cellrate/internal/asm128"
	"github.com/cellrate/cellrate/internal/path128"
)

// The paths the dispatch routines (dispatch_amd64.s, dispatch_arm64.s)
// compare path128.Active with; go_asm.h gives them to the assembly as
// const_pathFallback and so on.
const (
	pathFallback    = path128.Fallback
	pathCX16        = path128.CX16
	pathCX16VMOVDQA = path128.CX16VMOVDQA
	pathCASP        = path128.CASP
	pathLLSC        = path128.LLSC
)

// The assembly compares path128.Active as one byte.
var _ [1]struct{} = [unsafe.Sizeof(path128.Active)]struct{}{}

// Only the assembly uses the constants above and, in this build, the
// fallback (the dispatch routines jump to it): these references tell tools
// that do not read assembly (staticcheck) that they are used.
var (
	_ = [...]path128.Path{pathFallback, pathCX16, pathCX16VMOVDQA, pathCASP, pathLLSC}
	_ = [...]any{fallbackLoad, fallbackStore, fallbackSwap, fallbackCas}
)
