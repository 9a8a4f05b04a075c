-- SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
-- wrk script for the pipelined profile of bench/run and bench/compose;
-- they render @DEPTH@ (requests per write).
-- pipeline @DEPTH@ requests per write
init = function(args)
   local r = {}
   for i = 1, @DEPTH@ do r[i] = wrk.format(nil, wrk.path) end
   req = table.concat(r)
end
request = function() return req end
done = function(summary, latency, requests)
   local lo, hi = 0, 100
   if latency:percentile(100) ~= 0 then
      lo = 100
   else
      for _ = 1, 40 do
         local mid = (lo + hi) / 2
         if latency:percentile(mid) ~= 0 then lo = mid else hi = mid end
      end
   end
   local out = {}
   for _, p in ipairs({50, 75, 90, 99}) do
      out[#out + 1] = string.format("p%d=%d", p, lo > 0 and latency:percentile(p * lo / 100) or 0)
   end
   io.write(string.format("bench-latency-us reach=%.3f %s\n", lo, table.concat(out, " ")))
end
