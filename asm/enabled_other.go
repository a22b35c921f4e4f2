//go:build !(gc && !purego && (amd64 || arm64))

package asm

// Enabled reports whether this build carries the assembly routines.
const Enabled = false
