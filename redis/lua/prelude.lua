-- cellrate: exact integer arithmetic on Lua's doubles. Every value below is
-- an integer whose magnitude stays under 2^53, so each +, -, * is exact,
-- and the two operations that are not (a*b past 2^53, and /) are only used
-- through fdiv and muldiv, which correct their result to the exact one.
--
-- Loaded as a Redis Function library, everything outside a limiter's run
-- function is defined once, at load; as an EVAL script (servers before
-- Redis 7), on every call. A library cannot reach math, struct or string
-- while it loads, so a run function calls init first: the library
-- functions it uses become upvalues, not global lookups on every use.
local fmod, floor, pack, unpack, format
local function init()
  fmod, floor = math.fmod, math.floor
  pack, unpack, format = struct.pack, struct.unpack, string.format
end
local P26 = 67108864 -- 2^26
local P53 = 9007199254740992 -- 2^53
local BIG = 4194304  -- 2^22 seconds: past this, a time difference is "far"

-- fdiv returns floor(a/m) and a - m*floor(a/m) for |a| < 2^52, 1 <= m < 2^52.
-- fmod is exact in IEEE arithmetic; a - r is a multiple of m, so the
-- division is exact too.
local function fdiv(a, m)
  local r = fmod(a, m)
  if r < 0 then r = r + m end
  return (a - r) / m, r
end

-- muldiv returns floor(a*b/m) and a*b - m*floor(a*b/m) for integers
-- 0 <= a, b < 2^52 and 1 <= m < 2^50 whose quotient is below 2^52. A
-- product below 2^53 is exact and divided as fdiv does. Otherwise the
-- quotient estimated in doubles is within 2 of the exact one; the
-- remainder is then computed exactly from 26-bit halves (every partial
-- product is below 2^52, every partial sum below 2^53, and the two final
-- sums have exact results below 2^53, which IEEE addition returns exactly)
-- and the quotient corrected.
local function muldiv(a, b, m)
  local x = a * b
  if x < P53 then
    -- The product is exact, so fmod and the division are (as in fdiv).
    local r = fmod(x, m)
    return (x - r) / m, r
  end
  local q = floor(x / m)
  local a1 = floor(a / P26); local a0 = a - a1 * P26
  local b1 = floor(b / P26); local b0 = b - b1 * P26
  local q1 = floor(q / P26); local q0 = q - q1 * P26
  local m1 = floor(m / P26); local m0 = m - m1 * P26
  local s = (a1 * b1 - q1 * m1) * P26 + ((a1 * b0 - q1 * m0) + (a0 * b1 - q0 * m1))
  local r = s * P26 + (a0 * b0 - q0 * m0)
  while r < 0 do q = q - 1; r = r + m end
  while r >= m do q = q + 1; r = r - m end
  return q, r
end

-- smuldiv is muldiv for a negative a too (|a| < 2^52): the floor and a
-- remainder in [0, m).
local function smuldiv(a, b, m)
  if a >= 0 then return muldiv(a, b, m) end
  local q, r = muldiv(-a, b, m)
  if r == 0 then return -q, 0 end
  return -q - 1, m - r
end

-- norm returns the time s seconds + ns nanoseconds with ns in [0, 1e9).
local function norm(s, ns)
  local r = fmod(ns, 1000000000)
  if r < 0 then r = r + 1000000000 end
  return s + (ns - r) / 1000000000, r
end

-- now returns the decision's time as Unix seconds and nanoseconds: the
-- server's clock (TIME) when mode is 0, else the caller's.
local function now(mode, s, ns)
  if mode == 0 then
    local t = redis.call('TIME')
    return tonumber(t[1]), tonumber(t[2]) * 1000
  end
  return tonumber(s), tonumber(ns)
end

-- expire sets key to val, to leave Redis once the time fs s + fns ns
-- (when the state becomes the same as no key) has passed, plus grace ms.
-- With the server's clock the expiry is that absolute time (rounded up to
-- a millisecond): Redis drops a key only once its clock is past it, and
-- TIME is never behind that clock, so no decision can find the key gone
-- before its state is spent. With a caller's clock it is the same span
-- from the server's now.
local function expire(key, val, mode, fs, fns, s, ns, grace)
  local r = fmod(fns, 1000000) -- fns is in [0, 1e9)
  local ms = (fns - r) / 1000000
  if r > 0 then ms = ms + 1 end
  if mode == 0 then
    return redis.call('SET', key, val, 'PXAT', format('%d', fs * 1000 + ms + grace))
  end
  local d = fdiv(ns, 1000000) -- the caller's now, floored to a ms
  local px = (fs - s) * 1000 + ms - d + grace
  if px < 1 then px = 1 end
  return redis.call('SET', key, val, 'PX', format('%d', px))
end
