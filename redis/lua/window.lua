-- cellrate sliding window: package window's Params.Step on a key.
--
-- KEYS[1]: the key. ARGV: mode (0: the server's TIME, 1: the caller's),
-- the caller's now in Unix seconds and nanoseconds, n, 0 (unused), the
-- limit L; or n and L alone, the short form of mode 0. The window W in ns and the grace in ms are locals the Go side
-- puts before this text, one library (or script) per window and grace;
-- the limit is an argument, so a limit that changes (SetRate) needs no
-- library of its own. window is the run function; it sets L for the
-- functions below (calls never interleave).
--
-- The key holds Go's State: Start as Unix seconds and nanoseconds, Prev,
-- Cur. No key is the empty counter. Returns {ok, admitted, remaining,
-- retry seconds, retry ns}, the wait being retry seconds*1e9 + retry ns.
local L

-- fits: Prev*(W-e)/W + Cur + n <= L, exactly (n <= L).
local function fits(p, c, e, n)
  if p + c + n <= L then return true end
  if c + n > L then return false end
  local q, r = muldiv(p, W - e, W)
  if r > 0 then q = q + 1 end
  return q <= L - c - n
end

-- remaining: L minus the estimate rounded up, never negative.
local function remaining(p, c, e)
  local w = p
  if w ~= 0 and e ~= 0 then
    local r
    w, r = muldiv(p, W - e, W)
    if r > 0 then w = w + 1 end
  end
  if w + c < L then return L - w - c end
  return 0
end

-- wait: the offset from Start at which n first fits, given it does not at e.
local function wait(p, c, n)
  if c + n <= L then
    return W - muldiv(L - c - n, W, p)
  end
  if L - n < c then
    return 2 * W - muldiv(L - n, W, c)
  end
  return W
end

local function window(KEYS, ARGV)
  if not fmod then init() end
  local mode, n = 0, tonumber(ARGV[1])
  L = tonumber(ARGV[2])
  if ARGV[3] then
    mode, n, L = n, tonumber(ARGV[4]), tonumber(ARGV[6])
  end
  local S, N = now(mode, ARGV[2], ARGV[3])

  local SS, SN, P, C = S, N, 0, 0
  local raw = redis.call('GET', KEYS[1])
  if raw then SS, SN, P, C = unpack('<dddd', raw) end

  -- Advance: rotate to the window holding now.
  local e, back = 0, 0
  if P + C == 0 then
    SS, SN = S, N
  else
    local ds = S - SS
    if ds < 0 or (ds == 0 and N < SN) then
      if ds < -BIG then back = W + 1 else back = (SS - S) * 1000000000 + (SN - N) end
    else
      local el = 2 * W -- far ahead: two windows or more
      if ds <= BIG then el = ds * 1000000000 + (N - SN) end
      if el < W then
        e = el
      elseif el - W < W and C ~= 0 then
        SS, SN = norm(SS, SN + W)
        P, C, e = C, 0, el - W
      else
        SS, SN, P, C = S, N, 0, 0
      end
    end
  end

  if back > W then
    -- Before the windows still counted: nothing fits until Start-W, and n
    -- from then on only if it fits at Start.
    if n == 0 then return {1, 0, 0, 0, 0} end
    if not fits(P, C, 0, n) then
      return {0, 0, 0, SS - S, SN - N + wait(P, C, n)}
    end
    return {0, 0, 0, SS - S, SN - W - N}
  end
  if n ~= 0 and not fits(P, C, e, n) then
    return {0, 0, remaining(P, C, e), SS - S, SN - N + wait(P, C, n)}
  end
  if back ~= 0 then P = P + n else C = C + n end
  local rem = remaining(P, C, e)
  if n == 0 then return {1, 0, rem, 0, 0} end
  local fs, fns = norm(SS, SN + 2 * W) -- from Start+2W on, the same as no key
  expire(KEYS[1], pack('<dddd', SS, SN, P, C), mode, fs, fns, S, N, grace)
  return {1, n, rem, 0, 0}
end
