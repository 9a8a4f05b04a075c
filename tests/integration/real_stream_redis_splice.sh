# timeout: 120
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: real_stream_redis.sh's checks hold with nginx's sockmap_splice on
# (nginx-conf/stream_splice.conf; the agent with --nginx-vars): values from
# 0 B to 1 MiB and 50 MiB byte-exact, the 2000-deep pipeline's running sums in order,
# MULTI/EXEC as one, redis-benchmark's INCR count exact; and the sessions'
# directions switched past nginx (splice_switched), each byte redirected
# at least once.
REAL_SPLICE=1
. "$(dirname "$0")/real_stream_redis.sh"
