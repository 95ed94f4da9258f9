-- wrk -s bench/saturate/post.lua: POSTs one body over and over and checks every answer.
-- env BODY_KIND = json | urlencoded | raw, BODY_SIZE = the body's bytes. The servers answer
-- the length of the body's field s (json, urlencoded) or of the body (raw), so each answer
-- is checked against that number; done() prints CHECK ok=N bad=M for the bench to read.
local kind = os.getenv("BODY_KIND")
local size = tonumber(os.getenv("BODY_SIZE"))
local expect
if kind == "json" then
  wrk.body = '{"s":"' .. string.rep("a", size - 8) .. '"}'
  wrk.headers["Content-Type"] = "application/json"
  expect = tostring(size - 8)
elseif kind == "urlencoded" then
  wrk.body = "s=" .. string.rep("a", size - 2)
  wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
  expect = tostring(size - 2)
elseif kind == "raw" then
  wrk.body = string.rep("a", size)
  wrk.headers["Content-Type"] = "application/octet-stream"
  expect = tostring(size)
else
  error("BODY_KIND must be json, urlencoded or raw")
end
assert(#wrk.body == size, "body size")
wrk.method = "POST"

local threads = {}
function setup (thread) table.insert(threads, thread) end
function init (args) ok = 0; bad = 0; firstbad = "" end
function response (status, headers, body)
  if status == 200 and body == expect then
    ok = ok + 1
  else
    bad = bad + 1
    if firstbad == "" then firstbad = tostring(status) .. ":" .. string.sub(tostring(body), 1, 60) end
  end
end
function done (summary, latency, requests)
  local o, b, f = 0, 0, ""
  for _, t in ipairs(threads) do
    o = o + t:get("ok"); b = b + t:get("bad")
    if f == "" then f = t:get("firstbad") end
  end
  io.write(string.format("CHECK ok=%d bad=%d expect=%s firstbad=%s\n", o, b, expect, f))
end
