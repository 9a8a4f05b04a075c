# timeout: 180
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: with both ends attached (and paired), connection endings keep
# their TCP meaning and never cost or corrupt a byte.
#  - half-close: the client sends, shutdown(SHUT_WR)s and reads to EOF; the
#    server reads to EOF (it must see EOF exactly after the payload), then
#    writes an ack and an answer of its own and closes; the client reads the
#    whole answer and then EOF.  Once large (4 MiB each way), then 200
#    connections at 4 at a time.
#  - RST: one end closes with SO_LINGER {1, 0} in the middle of its stream
#    (client mid-upload, server mid-answer, and both ways in echo mode); the
#    other end must see ECONNRESET or EOF, never hang, and every byte it
#    did get must be a correct prefix of the pattern.
# Every case must form a pair, the redirect must carry the answers, and at
# the end no tracked socket may be left (status sockets back to 0).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
cg_new CS srv
cg_new CC cli
agent_start -c "$CS" -c "$CC"

seed=500
# case NAME SERVER_ARGS -- CLIENT_ARGS: one run, both ends must report ok
case_run() {
	local name=$1 sargs=() cargs=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do sargs+=("$1"); shift; done
	shift
	cargs=("$@")
	seed=$((seed + 1))
	st p0 pairs
	st m0 redirected_msgs
	tk_server s_$name "$CS" - --listen 127.0.0.1:0 --seed $seed --duration 60 \
		--timeout 10 "${sargs[@]}"
	tk_client c_$name "$CC" - --connect 127.0.0.1:${SPORT[s_$name]} --seed $seed \
		--timeout 10 "${cargs[@]}"
	tk_wait s_$name
	tk_ok s_$name "$name: server end correct"
	tk_ok c_$name "$name: client end correct"
	st p1 pairs
	st m1 redirected_msgs
	PAIRS=$((p1 - p0)) MSGS=$((m1 - m0))
	log "$name: pairs +$PAIRS redirected_msgs +$MSGS"
	assert_ge $PAIRS 1 "$name: paired"
}

st m_start redirected_msgs

# half-close
case_run halfclose_4m --mode verify --conns 1 --expect-bytes $((4 * MIB)) \
	--reply-bytes $((4 * MIB)) -- --mode verify --bytes $((4 * MIB))
assert_eq "$(rf s_halfclose_4m bytes_in)" $((4 * MIB)) "halfclose_4m: server saw EOF right after the payload"
assert_eq "$(rf c_halfclose_4m bytes_in)" $((4 * MIB + 64)) "halfclose_4m: client got the whole answer, then EOF"
assert_ge $MSGS 1 "halfclose_4m: the answer was redirected"

case_run halfclose_many --mode verify --conns 200 --threads 4 --expect-bytes 65536 \
	--reply-bytes 262144 -- --mode verify --bytes 65536 --conns 200 --parallel 4
assert_eq "$(rf c_halfclose_many conns)" 200 "halfclose_many: 200 connections completed"
assert_ge $PAIRS 200 "halfclose_many: every connection paired"
assert_ge $MSGS 200 "halfclose_many: answers were redirected"

# RST from the client in the middle of its upload
case_run client_rst --mode verify --conns 1 --allow-reset --expect-bytes $((8 * MIB)) \
	-- --mode verify --bytes $((8 * MIB)) --rst-after $((3 * MIB))
assert_eq "$(rf c_client_rst rst_sent)" 1 "client_rst: the client closed with RST"
assert_eq "$(rf s_client_rst resets)" 1 "client_rst: the server saw the reset (ECONNRESET or early EOF)"
assert_eq "$(rf s_client_rst first_bad)" -1 "client_rst: what the server got is a correct prefix"
assert_le "$(rf s_client_rst bytes_in)" $((3 * MIB)) "client_rst: the server got no more than was sent"

# RST from the server in the middle of its answer
case_run server_rst --mode verify --conns 1 --reply-bytes $((8 * MIB)) \
	--rst-after $((3 * MIB)) -- --mode verify --bytes $MIB --allow-reset
assert_eq "$(rf s_server_rst rst_sent)" 1 "server_rst: the server closed with RST"
assert_eq "$(rf c_server_rst resets)" 1 "server_rst: the client saw the reset (ECONNRESET or early EOF)"
assert_eq "$(rf c_server_rst first_bad)" -1 "server_rst: what the client got is a correct prefix"
assert_le "$(rf c_server_rst bytes_in)" $((3 * MIB + 64)) "server_rst: the client got no more than was sent"
assert_ge $MSGS 1 "server_rst: the answer was redirected"

# echo mode (full duplex): RST from either end mid-stream
case_run echo_client_rst --mode echo --conns 1 --allow-reset \
	-- --mode echo --bytes $((8 * MIB)) --rst-after $((3 * MIB))
assert_eq "$(rf s_echo_client_rst resets)" 1 "echo_client_rst: the server saw the reset"
assert_eq "$(rf s_echo_client_rst first_bad)/$(rf c_echo_client_rst first_bad)" -1/-1 \
	"echo_client_rst: both ends got correct prefixes"
assert_ge $MSGS 1 "echo_client_rst: the echo was redirected"

case_run echo_server_rst --mode echo --conns 1 --rst-after $((2 * MIB)) \
	-- --mode echo --bytes $((8 * MIB)) --allow-reset
assert_ge "$(rf c_echo_server_rst resets)" 1 "echo_server_rst: the client saw the reset"
assert_eq "$(rf s_echo_server_rst first_bad)/$(rf c_echo_server_rst first_bad)" -1/-1 \
	"echo_server_rst: both ends got correct prefixes"
assert_le "$(rf c_echo_server_rst bytes_in)" $((2 * MIB)) "echo_server_rst: the client got no more than was echoed"
assert_ge $MSGS 1 "echo_server_rst: the echo was redirected"

st m_end redirected_msgs
assert_ge $((m_end - m_start)) 1 "redirected_msgs moved"
log "fallbacks: $(fallbacks)"

# Every socket of every case is closed by now: nothing may stay tracked.
st_until socks sockets 0 10
assert_eq "$socks" 0 "no tracked socket left after half-closes and resets"

agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"
