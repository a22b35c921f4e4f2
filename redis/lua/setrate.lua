-- cellrate GCRA across a change of rate (SetRate). A key holds, after its
-- origin and TAT, the time of its latest write (h) and of its last change
-- of rate (c), both in ns from the origin, and the p, e, j it was written
-- with. A decision under other p, e, j converts the key at its time: the
-- events owed then under the writer's rate (its TAT's lead over now, in
-- the writer's events, rounded up to whole events) are owed from then on
-- at this rate, and that time becomes the key's last change. So every
-- admitted event is counted at the rate in force when it was owed, and
-- the bound is the burst plus the integral of the rates in force. Two
-- decisions are denied, writing nothing, because their time is behind what
-- the conversion assumes: one under a rate other than the key's, at a time
-- before its latest write (its wait is to that write), and one before the
-- key's last change (its wait is to that change or to when its cost fits,
-- the later). A key of 24 bytes (written before keys carried their rate)
-- is read as this rate's. gcra.lua reads and writes the key.
local CAP = 4503599627370496 -- 2^52 ns: no change known (a time before
-- the origin by more is "far", see BIG)
local hd, cd -- this call's key: h and c, ns from its origin

-- rekey converts a key written with wp, we, wj: it returns the events
-- owed at now, or nil and the denial of a decision before the key's
-- latest write.
local function rekey(S, N, OS, ON, t, wp, we, wj)
  local ds = S - OS
  if ds > BIG then return 0 end -- far ahead: full (t < 2^50 steps)
  local x = ds * 1000000000 + (N - ON)
  if ds < -BIG or x < hd then return nil, {0, 0, 0, OS - S, ON - N + hd} end
  local q, r = smuldiv(x, we, wp) -- now in the writer's steps: q + r/wp
  local a = t - q
  if a <= 0 then return 0 end
  -- ceil((a - r/wp)/wj), a >= 1, 0 <= r/wp < 1
  if r > 0 then return fdiv(a - 1, wj) + 1 end
  return (fdiv(a + wj - 1, wj))
end

-- before is the denial of a decision (cost c steps) before the key's last
-- change: its wait, from the origin, is to that change or to when the
-- cost fits (t - (bj - c) <= now in steps), the later.
local function before(t, q, c, OS, ON, S, N)
  local w = cd
  local d = t - (b * j - c)
  if d > q then
    local v, vr = smuldiv(d, p, e)
    if vr > 0 then v = v + 1 end
    if v > w then w = v end
  end
  return {0, 0, 0, OS - S, ON - N + w}
end
