# timeout: 180
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: real_stream_postgres.sh's checks hold with nginx's
# sockmap_splice on (nginx-conf/stream_splice.conf; the agent with
# --nginx-vars): pgbench's transactions all processed, kept and per
# transaction, the TPC-B invariant, a 5 MB COPY byte-identical to the
# unix socket's; and the sessions' directions switched past nginx.
REAL_SPLICE=1
. "$(dirname "$0")/real_stream_postgres.sh"
