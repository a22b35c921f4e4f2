-- cellrate GCRA: package gcra's Params.Step on a key.
--
-- KEYS[1]: the key. ARGV: mode (0: the server's TIME, 1: the caller's),
-- the caller's now in Unix seconds and nanoseconds, n, take (0: n or
-- nothing; 1: up to n now, or if none is there up to ARGV[8] reserved, see
-- below); or n alone, the short form of mode 0 and take 0 (the server
-- parses each argument of every call). The Params are locals the Go side puts before
-- this text, one library (or script) per parameter set: p, e, j, b (burst),
-- c1 (1e9 mod p), c2 (2^63 mod p) and grace (ms). gcra is the run function.
--
-- Go's state is a TAT counted in steps of p/e ns from math.MinInt64, with
-- u = now + 2^63. The key holds it as an origin O (Unix seconds and ns, a
-- point where u*e/p is whole: u = O + 2^63 is a multiple of p) and t, the
-- TAT in steps from O, so that tat = (O+2^63)*e/p + t and every number stays
-- far below 2^53. The origin moves to the grid point at or before now on
-- each write; no key is a full limiter, as the TAT 0 is in Go.
--
-- Three more ARGV, from a TwoTier: units to give back, the key's value its
-- last borrow wrote, and the most units a take may reserve. If the key still holds that value (nothing was
-- admitted since), those units of that borrow are undone, as if it had
-- taken fewer: the state is then exactly the one that smaller borrow would
-- have left. A missing key is rebuilt from that value.
--
-- Returns {ok, admitted, remaining, retry seconds, retry ns}: the wait is
-- retry seconds*1e9 + retry ns (0 for units taken now; for a reservation,
-- the wait for its first event); with the TwoTier's ARGV, also the value
-- written ("" if none).
local bj = b * j

-- store writes the TAT t (from the origin OS s + ON ns; t >= q, x is now -
-- O in ns) with the origin moved to the grid point at or before now (k*p
-- ns on, k*e steps), which keeps every stored number small, and the expiry
-- at which it is full again: once now*e >= t*p from the new origin, at it
-- + ceil(t*p/e) ns. With p = 1 (then e = 1: an interval of whole ns) a
-- step is a ns and every point a grid point.
local function store(key, x, OS, ON, t, mode, S, N)
  local k, f, fr = x, t - x, 0
  if p ~= 1 then
    k = fdiv(x, p)
    f, fr = muldiv(t - k * e, p, e)
    if fr > 0 then f = f + 1 end
  end
  local os, on = norm(OS, ON + k * p)
  local fs, fns = norm(os, on + f)
  local h, c = hd, cd - k * p -- see setrate.lua
  if x > h then h = x end
  if c < -CAP then c = -CAP end
  local v = pack('<dddddddd', os, on, t - k * e, h - k * p, c, p, e, j)
  expire(key, v, mode, fs, fns, S, N, grace)
  return v
end

-- reply adds the value written, for a TwoTier.
local function reply(a, v, giving)
  if giving then a[6] = v end
  return a
end

local function gcra(KEYS, ARGV)
  if not fmod then init() end
  local mode, n, take = 0, tonumber(ARGV[1]), 0
  if ARGV[2] then
    mode, n, take = n, tonumber(ARGV[4]), tonumber(ARGV[5])
  end
  local S, N = now(mode, ARGV[2], ARGV[3])
  local giving = ARGV[6] ~= nil

  local OS, ON, t
  local conv -- the events owed, when the key was written at another rate
  hd, cd = -CAP, -CAP
  local raw = redis.call('GET', KEYS[1])
  if not raw and giving and ARGV[7] ~= '' then
    -- No key, and this process's last borrow wrote one: Redis restarted
    -- empty, or the key expired full (then the value is a full state too).
    -- Rebuild it from that value: never less than it, as the key held.
    raw = ARGV[7]
  end
  if raw then
    local wp, we, wj = p, e, j -- a key of 24 bytes: written before keys carried their rate
    if #raw == 24 then
      OS, ON, t = unpack('<ddd', raw)
    else
      OS, ON, t, hd, cd, wp, we, wj = unpack('<dddddddd', raw)
    end
    if wp ~= p or we ~= e or wj ~= j then
      local deny
      conv, deny = rekey(S, N, OS, ON, t, wp, we, wj)
      if deny then
        if n == 0 then deny = {1, 0, 0, 0, 0} end
        return reply(deny, '', giving)
      end
      raw = false
    end
  end
  if raw then
    local ds = S - OS
    if ds > BIG then
      raw = false -- so far ahead that the limiter is full (t < 2^50 steps)
    elseif ds < -BIG then
      if n == 0 then return {1, 0, 0, 0, 0} end
      -- So far behind the origin (more than 2^51 ns) that nothing fits:
      -- t - slack > -2^48 > now in steps. The wait is exact all the same.
      local k = 1
      if take == 0 then k = n end
      local w, wr = smuldiv(t - (bj - k * j), p, e)
      if wr > 0 then w = w + 1 end
      if cd > w then w = cd end -- before the key's last change of rate
      return {0, 0, 0, OS - S, ON - N + w}
    end
  end
  local x -- now - O in ns
  if raw then
    x = (S - OS) * 1000000000 + (N - ON)
  else
    -- A full limiter: the grid point at or before now becomes the origin,
    -- with the TAT at it (any TAT at or before now is the same state).
    -- u mod p = ((S mod p)*(1e9 mod p) + N + 2^63 mod p) mod p.
    local sm = fmod(S, p)
    if sm < 0 then sm = sm + p end
    local _, r1 = muldiv(sm, c1, p)
    local off = fmod(r1 + N + c2, p)
    OS, ON = norm(S, N - off)
    x, t = off, 0
    hd, cd = -CAP, -CAP
    if conv then hd, cd = x, x end
  end

  -- q = floor(now in steps - O's) and its remainder: now*e = q*p + r.
  local q, r = x, 0
  if p ~= 1 then q, r = smuldiv(x, e, p) end
  if conv and conv > 0 then
    t = q + conv * j -- the events owed, from the first step at or after now
    if r > 0 then t = t + 1 end
  end
  if x < cd and n > 0 then
    local c = n * j
    if take == 1 then c = j end
    return reply(before(t, q, c, OS, ON, S, N), '', giving)
  end

  -- Give back (TwoTier): at most what keeps the TAT at or after now; more
  -- would refill nothing.
  local given = false
  if giving and raw and raw == ARGV[7] and t > q then
    local back = math.min(tonumber(ARGV[6]), floor((t - q) / j))
    if back > 0 then
      t = t - back * j
      given = true
    end
  end
  local rem -- whole events available at now, before the decision
  if t > q then
    rem = 0
    if t - q < bj then rem = floor((bj - (t - q)) / j) end
  else
    rem = b
  end
  local m = n -- the cost asked
  if take == 1 and rem < n then m = rem end
  if m == 0 and (take == 0 or n == 0) then
    -- n == 0: admitted, nothing changes
    if given then return reply({1, 0, rem, 0, 0}, store(KEYS[1], x, OS, ON, t, mode, S, N), giving) end
    return reply({1, 0, rem, 0, 0}, '', giving)
  end
  if m == 0 then
    -- A take (a TwoTier's borrow) that found nothing reserves up to ARGV[8]
    -- of the next events: each admitted at the first time it is there, as
    -- that many decisions of one in a row would be, so the state is theirs;
    -- the wait returned is for the first. The TAT may then pass now by at
    -- most two bursts (rem == 0 here, so t - q > bj - j).
    local room = floor((2 * bj - (t - q)) / j)
    if room >= 1 then
      local w, wr = smuldiv(t - (bj - j), p, e)
      if wr > 0 then w = w + 1 end
      local q1, r1 = w, 0
      if p ~= 1 then q1, r1 = smuldiv(w, e, p) end
      if t < q1 or (t == q1 and r1 > 0) then
        t = q1 + j
        if r1 > 0 then t = t + 1 end
      else
        t = t + j
      end
      -- With k > 1, room > 1, so b > 1 and bj - j >= j: each next event is
      -- there before the TAT (its time is below t - (bj - j) + one ns, a ns
      -- at most j steps), so it adds j, with no restart.
      local k = math.min(tonumber(ARGV[8]) or n, room)
      t = t + (k - 1) * j
      return reply({1, k, 0, OS - S, ON - N + w}, store(KEYS[1], x, OS, ON, t, mode, S, N), giving)
    end
    m = 1 -- the wait is for one event
  end

  local c = m * j
  local sl = bj - c
  if t - sl > q then
    -- Denied: admitted once t*p <= x'*e + sl*p, x' = now + w - O, so
    -- w = ceil((t - sl)*p/e) - x; returned as O - now + ceil(...).
    local w, wr = smuldiv(t - sl, p, e)
    if wr > 0 then w = w + 1 end
    local v = ''
    if given or conv then v = store(KEYS[1], x, OS, ON, t, mode, S, N) end
    return reply({0, 0, rem, OS - S, ON - N + w}, v, giving)
  end

  -- Admitted: a TAT behind now restarts at the first step at or after now.
  if t < q or (t == q and r > 0) then
    t = q + c
    if r > 0 then t = t + 1 end
  else
    t = t + c
  end
  rem = 0
  if t - q < bj then rem = floor((bj - (t - q)) / j) end

  local v = store(KEYS[1], x, OS, ON, t, mode, S, N)
  if giving then return {1, m, rem, 0, 0, v} end
  return {1, m, rem, 0, 0}
end
