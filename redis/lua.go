package redis

import (
	_ "embed"
	"strconv"

	goredis "github.com/redis/go-redis/v9"
)

var (
	//go:embed lua/prelude.lua
	luaPrelude string
	//go:embed lua/gcra.lua
	luaGCRA string
	//go:embed lua/setrate.lua
	luaSetRate string
	//go:embed lua/window.lua
	luaWindow string
)

// program is the Lua of one parameter set, its constants Lua literals
// (decimal integers below 2^53, read exactly) rather than arguments parsed
// on every call. On Redis 7 and later it is a Function library, loaded once
// per node and called with FCALL, so the prelude's functions are defined
// once, at load, not on every call; on an older server it runs as a script
// (EVALSHA, EVAL after NOSCRIPT).
type program struct {
	name   any    // the library's and its function's name, boxed once
	lib    string // the library: FUNCTION LOAD's argument
	script *goredis.Script
	sha    any        // script's hash, boxed once
	gp     gcraParams // a GCRA's parameters
}

func newProgram(code, run string) *program {
	script := goredis.NewScript(code + "return " + run + "(KEYS, ARGV)\n")
	name := "cellrate_" + script.Hash()
	lib := "#!lua name=" + name + "\n" + code + "redis.register_function('" + name + "', " + run + ")\n"
	return &program{name: name, lib: lib, script: script, sha: script.Hash()}
}

func u64(x uint64) string { return strconv.FormatUint(x, 10) }

// gcraProgram is the GCRA program for one parameter set.
func gcraProgram(gp gcraParams, graceMs int64) *program {
	head := "local p, e, j, b, c1, c2, grace = " + u64(gp.p) + ", " + u64(gp.e) + ", " + u64(gp.j) + ", " +
		u64(gp.burst) + ", " + u64(gp.c1) + ", " + u64(gp.c2) + ", " + strconv.FormatInt(graceMs, 10) + "\n"
	prog := newProgram(luaPrelude+head+luaSetRate+luaGCRA, "gcra")
	prog.gp = gp
	return prog
}

// windowProgram is the sliding-window program for one window and grace
// (the limit is an argument).
func windowProgram(w, graceMs int64) *program {
	head := "local W, grace = " + strconv.FormatInt(w, 10) + ", " + strconv.FormatInt(graceMs, 10) + "\n"
	return newProgram(luaPrelude+head+luaWindow, "window")
}
