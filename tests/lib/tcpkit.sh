# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# For the socket-level tests driven by build/tools/tcpkit: $K, cgroup and
# namespace helpers that keep their cleanup in this shell, tcpkit runners
# and result parsing.  Source after common.sh.

K=$TOOLS/tcpkit
[ -x "$K" ] || fail "$K not built (make tools)"

# cg_new VAR NAME / ns_new VAR NAME: cg_make / ns_make with the result in
# VAR, in this shell.  cg_new also registers cg_kill, so the cgroup is
# emptied even if a later step of the cleanup fails.
cg_new() {
	cg_make "$2" >"$TMP/cg_new" || exit 1
	printf -v "$1" '%s' "$(cat "$TMP/cg_new")"
	on_exit "cg_kill '${!1}'"
}
cg_kill() {
	local i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		[ -n "$(cat "$1/cgroup.procs" 2>/dev/null)" ] || return 0
		xargs -r kill -9 <"$1/cgroup.procs" 2>/dev/null
		sleep 0.2
	done
}
ns_new() {
	ns_make "$2" >"$TMP/ns_new" || exit 1
	printf -v "$1" '%s' "$(cat "$TMP/ns_new")"
}
fallbacks() {
	"$AGENT" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["fallbacks"])'
}
# rf NAME FIELD: a field of the result line of tcpkit run NAME
rf() { sed -n "s/^result .* $2=\([^ ]*\).*/\1/p" "$TMP/$1.res" 2>/dev/null | tail -n 1; }
# in_cg_ns CGROUP NETNS CMD...: CMD in CGROUP and, unless NETNS is -, in
# NETNS (cgroup first: `ip netns exec` remounts /sys over the cgroup tree)
in_cg_ns() {
	local cg=$1 ns=$2
	shift 2
	if [ "$ns" = - ]; then
		cg_exec "$cg" "$@"
	else
		cg_exec "$cg" ip netns exec "$ns" "$@"
	fi
}
# tk_server NAME CGROUP NETNS ARGS...: tcpkit server in the background,
# waits until it listens; SPORT[NAME] = its port.  tk_wait NAME: its status.
declare -A PID SPORT
tk_server() {
	local name=$1 cg=$2 ns=$3 i
	shift 3
	rm -f "$TMP/$name.port" "$TMP/$name.res"
	in_cg_ns "$cg" "$ns" "$K" server --ready-file "$TMP/$name.port" \
		--out "$TMP/$name.res" "$@" >"$TMP/$name.log" 2>&1 &
	PID[$name]=$!
	on_exit "kill ${PID[$name]}"
	for i in $(seq 1 100); do
		if [ -s "$TMP/$name.port" ]; then
			SPORT[$name]=$(cat "$TMP/$name.port")
			return 0
		fi
		kill -0 "${PID[$name]}" 2>/dev/null ||
			fail "server $name exited before listening: $(tail -n 5 "$TMP/$name.log")"
		sleep 0.05
	done
	fail "server $name not listening after 5 s"
}
tk_wait() { wait "${PID[$1]}"; }
# tk_client NAME CGROUP NETNS ARGS...: tcpkit client, in the foreground
tk_client() {
	local name=$1 cg=$2 ns=$3
	shift 3
	rm -f "$TMP/$name.res"
	in_cg_ns "$cg" "$ns" "$K" client --out "$TMP/$name.res" "$@" >"$TMP/$name.log" 2>&1
}
# tk_client_bg NAME CGROUP NETNS ARGS...: the same in the background (tk_wait)
tk_client_bg() {
	local name=$1 cg=$2 ns=$3
	shift 3
	rm -f "$TMP/$name.res"
	in_cg_ns "$cg" "$ns" "$K" client --out "$TMP/$name.res" "$@" >"$TMP/$name.log" 2>&1 &
	PID[$name]=$!
	on_exit "kill ${PID[$name]}"
}
# tk_ok NAME LABEL: tcpkit run NAME reported ok=1
tk_ok() {
	local line
	line=$(grep '^result' "$TMP/$1.res" 2>/dev/null)
	log "$1: ${line:-no result line}"
	if [ "$(rf "$1" ok)" != 1 ]; then
		grep -v '^result' "$TMP/$1.log" 2>/dev/null | tail -n 10 | sed 's/^/#   /'
		fail "$2: tcpkit $1 reports a failure: ${line:-no result line}"
	fi
	ok "$2"
}
# tk_pair_and_outsider CS CC CX: one local pair (a client in CC sends
# 100000 bytes, the server in CS answers with a 64-byte ack line and
# 200000 bytes) and one connection whose client is in CX, not attached
# (1000 bytes); each checked byte for byte
tk_pair_and_outsider() {
	tk_server s "$1" - --listen 127.0.0.1:0 --mode verify --conns 1 --expect-bytes 100000 \
		--reply-bytes 200000 --duration 30
	tk_client c "$2" - --connect 127.0.0.1:${SPORT[s]} --mode verify --bytes 100000
	tk_wait s
	tk_ok s "server read the payload"
	tk_ok c "client read the answer"
	tk_server s2 "$1" - --listen 127.0.0.1:0 --mode verify --conns 1 --expect-bytes 1000 \
		--duration 30
	tk_client c2 "$3" - --connect 127.0.0.1:${SPORT[s2]} --mode verify --bytes 1000
	tk_wait s2
	tk_ok c2 "unaccelerated connection works"
}
# wait_file FILE LABEL: wait up to 10 s for FILE to appear
wait_file() {
	local i
	for i in $(seq 1 200); do
		[ -e "$1" ] && return 0
		sleep 0.05
	done
	fail "$2: $1 did not appear within 10 s"
}

# tk_echo_count NAME SERVER_CG CLIENT_CG NETNS ADDR PORT [CLIENT ARGS]: one
# 64 KiB echo connection CLIENT_CG -> SERVER_CG on ADDR:PORT in NETNS ("-":
# this one), every byte checked; PAIRS and HAZ: what the agent's pairs and
# fallbacks.hazard grew by (the hazard tests)
tk_echo_count() {
	local p0 p1 f0 f1
	st p0 pairs
	st f0 fallbacks.hazard
	tk_server "s_$1" "$2" "$4" --listen "$5:$6" --mode echo --seed 5 --conns 1 \
		--expect-bytes 64K --duration 20
	tk_client "c_$1" "$3" "$4" --connect "$5:$6" --mode echo --seed 5 --bytes 64K "${@:7}"
	tk_wait "s_$1"
	tk_ok "c_$1" "$1: the echo got every byte back"
	st p1 pairs
	st f1 fallbacks.hazard
	PAIRS=$((p1 - p0)) HAZ=$((f1 - f0))
	log "$1: pairs +$PAIRS, fallbacks.hazard +$HAZ"
}
