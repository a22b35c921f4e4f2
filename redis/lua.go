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
	//go:embed lua/window.lua
	luaWindow string
)

// The scripts run by EVALSHA, falling back to EVAL (which loads them) when
// a server answers NOSCRIPT: after a restart, on a new cluster node.
var windowScript = goredis.NewScript(luaPrelude + luaWindow)

// gcraScript is the GCRA script for one parameter set: its constants are
// Lua literals (decimal integers below 2^53, read exactly), not arguments
// parsed on every call.
func gcraScript(gp gcraParams, graceMs int64) *goredis.Script {
	u := func(x uint64) string { return strconv.FormatUint(x, 10) }
	head := "local p, e, j, b, c1, c2, grace = " + u(gp.p) + ", " + u(gp.e) + ", " + u(gp.j) + ", " +
		u(gp.burst) + ", " + u(gp.c1) + ", " + u(gp.c2) + ", " + strconv.FormatInt(graceMs, 10) + "\n"
	return goredis.NewScript(luaPrelude + head + luaGCRA)
}
