//go:build !(gc && !purego && (amd64 || arm64))

package path128

func detect() []Path { return []Path{Fallback} }
