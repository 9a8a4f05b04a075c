#!/usr/bin/env bash
# timeout: 900
# order: last (its images are built meanwhile: tests/run, .ci/run)
# Proves, with docker-compose.yml as shipped, under both of Docker's
# defaults for a container's cgroup namespace: the host's (cgroup v1 and
# hybrid hosts) and a private one (cgroup v2 hosts): once on the host's
# daemon, with its default, once on a second dockerd started with
# --default-cgroupns-mode set to the other (scripts/docker-up.sh --cgroupns):
# the compose setup builds and comes up; the agent sidecar finds and
# attaches to nginx's cgroup by itself and follows the upstream and wrk
# containers; sends between containers are redirected on both hops
# (redirected_msgs per request), and bodies through the proxy are
# byte-exact (sha256 against the upstream's own files); the agent stops
# cleanly.  Images stay cached (ngx-sockmap/*:compose): a cold build takes
# minutes (hence the timeout), a warm one seconds; the second daemon gets
# a copy and is thrown away with it.  A Docker daemon is
# started only when none runs, and then stopped at the end.  Skips only
# when Docker cannot run here at all.
. "$(dirname "$0")/../lib/common.sh"
. "$TOP/scripts/compose-lib.sh"

# Kept after the test for a failure's details (TMP is removed).
COMPOSE_LOG=$TOP/build/test-logs/compose.log
mkdir -p "$(dirname "$COMPOSE_LOG")"
: >"$COMPOSE_LOG"
on_exit compose_teardown
rc=0
compose_setup "nsmtest$$" "${NGX_SOCKMAP_TEST_SUBNET:-172.29.88.0/24}" || rc=$?
[ $rc = 77 ] && skip "docker can't run here: $COMPOSE_ERR"
[ $rc = 0 ] || fail "$COMPOSE_ERR"
ok "images built (base $BASE_IMAGE, $COMPOSE_NAME)"

# st/stat_get (common.sh) read the agent in the container, not a host agent
stat_get() {
	agent_json | python3 -c '
import json, sys
v = json.load(sys.stdin)
for k in sys.argv[1].split("."):
    v = v[k]
print(v)' "$1"
}

# cgroup_id CONTAINER: id (inode) of its cgroup v2 directory, from the host
cgroup_id() {
	local pid path
	pid=$(docker inspect -f '{{.State.Pid}}' "$1")
	path=$(sed -n 's/^0:://p' "/proc/$pid/cgroup")
	stat -c %i "$CG2$path"
}
# reason_of ID: the agent's reason for that cgroup id ("" when not attached)
reason_of() {
	python3 -c '
import json, sys
for c in json.load(open(sys.argv[1]))["cgroups"]:
    if str(c["id"]) == sys.argv[2]:
        print(c["reason"])' "$TMP/status.json" "$1"
}
# cgroupns CONTAINER: "host" when its pid 1 is in the host's cgroup
# namespace (this test's), else "private"
cgroupns() {
	local pid
	pid=$(docker inspect -f '{{.State.Pid}}' "$1")
	if [ "$(readlink "/proc/$pid/ns/cgroup")" = "$(readlink /proc/$$/ns/cgroup)" ]; then
		echo host
	else
		echo private
	fi
}

# the cgroup namespace the answering daemon gives containers by default:
# `docker info` lists "name=cgroupns" among its security options when
# that is a private one
cgroupns_default() {
	if docker info -f '{{json .SecurityOptions}}' | grep -q 'name=cgroupns'; then
		echo private
	else
		echo host
	fi
}

# e2e LABEL NS: the whole check on the project COMPOSE names, where
# Docker gives containers the cgroup namespace NS (host or private)
e2e() {
	local m=$1 want_ns=$2 c f got want reqs left sums
	rm -f "$TMP/status.json"
	compose_up --no-build || fail "$m: $COMPOSE_ERR"
	C_NGINX=$(cid nginx) C_UP=$(cid upstream) C_WRK=$(cid wrk) C_AGENT=$(cid agent)
	for c in C_NGINX C_UP C_WRK C_AGENT; do
		[ -n "${!c}" ] || fail "$m: no container for ${c#C_} (log: $COMPOSE_LOG)"
	done
	ok "$m: compose up: nginx, upstream, agent, wrk"
	assert_eq "$(cgroupns "$C_NGINX")" "$want_ns" "$m: nginx's cgroup namespace"
	# the clients of the setup reuse TIME_WAIT ports (docker-compose.yml says why)
	for c in C_NGINX C_WRK; do
		assert_eq "$(docker exec "${!c}" cat /proc/sys/net/ipv4/tcp_tw_reuse)" 1 "$m: ${c#C_}: net.ipv4.tcp_tw_reuse"
	done

	# status --json answers once the agent has attached
	for _ in $(seq 1 150); do
		agent_json >"$TMP/status.json" 2>/dev/null && break
		[ "$(docker inspect -f '{{.State.Running}}' "$C_AGENT")" = true ] ||
			fail "$m: agent exited: $(docker logs --tail 5 "$C_AGENT" 2>&1 | tr '\n' ' ')"
		sleep 0.2
	done
	[ -s "$TMP/status.json" ] || fail "$m: agent not attached after 30 s: $(docker logs --tail 5 "$C_AGENT" 2>&1 | tr '\n' ' ')"
	ok "$m: agent attached"
	# In a private cgroup namespace the agent joins the host's, or where
	# it may not (pid 1's namespace refused to it), resolves paths against
	# its own root (agent/target.c): nothing in docker-compose.yml asks for
	# the host's.  Which one it took, for the log:
	log "$m: the agent runs in the $(cgroupns "$C_AGENT") cgroup namespace"

	ID_NGINX=$(cgroup_id "$C_NGINX") ID_UP=$(cgroup_id "$C_UP") ID_WRK=$(cgroup_id "$C_WRK")
	[[ "$(reason_of "$ID_NGINX")" == named* ]] ||
		fail "$m: nginx's cgroup ($ID_NGINX) not named by the agent: $(cat "$TMP/status.json")"
	ok "$m: agent found nginx's cgroup itself ($(reason_of "$ID_NGINX"))"

	# Traffic until the agent has followed the upstream and wrk containers
	# (it looks every 2 s).
	for _ in $(seq 1 20); do
		docker exec "$C_WRK" wrk -t1 -c4 -d1s http://nginx:8080/small.txt >/dev/null 2>&1
		agent_json >"$TMP/status.json" 2>/dev/null
		[[ "$(reason_of "$ID_UP")" == followed* ]] && [[ "$(reason_of "$ID_WRK")" == followed* ]] && break
	done
	for c in upstream:$ID_UP wrk:$ID_WRK; do
		[[ "$(reason_of "${c#*:}")" == followed* ]] ||
			fail "$m: ${c%%:*} container's cgroup not followed: $(cat "$TMP/status.json")"
		ok "$m: followed the ${c%%:*} container ($(reason_of "${c#*:}"))"
	done

	# New connections from here on: the upstream keep-alive pool of the
	# priming traffic was made before the upstream was attached.
	nginx_fresh "$C_UP" "$C_NGINX" || fail "$m: old nginx workers did not exit after a reload"
	st msgs0 redirected_msgs
	st bytes0 redirected_bytes
	docker exec "$C_WRK" wrk -t1 -c8 -d3s http://nginx:8080/small.txt >"$TMP/wrk.out" 2>&1 ||
		fail "$m: wrk failed: $(cat "$TMP/wrk.out")"
	grep -qE "Socket errors|Non-2xx" "$TMP/wrk.out" && fail "$m: wrk saw errors: $(cat "$TMP/wrk.out")"
	reqs=$(sed -n 's/^ *\([0-9]*\) requests in.*/\1/p' "$TMP/wrk.out")
	st msgs1 redirected_msgs
	assert_ge "$reqs" 1000 "$m: wrk requests through the proxy"
	# A proxied request is 4 sends (wrk -> nginx -> upstream -> nginx -> wrk):
	# at least 3.5 per request means both hops crossed containers redirected.
	assert_ge $(((msgs1 - msgs0) * 10 / reqs)) 35 "$m: redirected sends per request x10"

	# Byte-exact: 8 x 1 MiB and 8 x small through the proxy on one keep-alive
	# connection each, checked against the sums the upstream image recorded.
	sums=$(docker exec "$C_UP" cat /var/lib/ngx-sockmap/upstream/html/SHA256SUMS)
	for f in 1m.bin small.txt; do
		want=$(echo "$sums" | awk -v f="$f" '$2 == f { print $1 }')
		got=$(docker exec "$C_WRK" sh -c '
			f=$1; set --
			for i in 1 2 3 4 5 6 7 8; do set -- "$@" -o /tmp/body.$i "http://nginx:8080/$f"; done
			curl -sS --fail --max-time 30 "$@" || exit 1
			for i in 1 2 3 4 5 6 7 8; do sha256sum </tmp/body.$i; done | sort | uniq -c' sh "$f") ||
			fail "$m: curl of /$f failed: $got"
		assert_eq "$(echo "$got" | awk '{ print $1, $2 }')" "8 $want" "$m: 8 x /$f byte-exact (sha256)"
	done
	st bytes1 redirected_bytes
	assert_ge $((bytes1 - bytes0)) $((16 * 1048576)) "$m: redirected bytes cover the 1 MiB bodies on both hops"

	# The sidecar stops cleanly (SIGTERM from docker stop: exit 0).
	docker stop -t 10 "$C_AGENT" >/dev/null
	assert_eq "$(docker inspect -f '{{.State.ExitCode}}' "$C_AGENT")" 0 "$m: agent exit status on docker stop"

	compose_down || fail "$m: compose down failed"
	left=$(docker ps -aq --filter "label=com.docker.compose.project=$COMPOSE_PROJECT")
	[ -z "$left" ] || fail "$m: containers left after compose down: $left"
	ok "$m: compose down: no container left"
}

# The host's daemon: on cgroup v1 and hybrid hosts its default is the
# host's cgroup namespace, on cgroup v2 hosts a private one.
ns=$(cgroupns_default)
e2e "dockerd default ($ns cgroupns)" "$ns"
other=private
[ "$ns" = private ] && other=host
compose_cgroupns "$other" "nsmtestc$$" "${NGX_SOCKMAP_TEST_SUBNET_CGNS:-172.29.89.0/24}" || fail "$COMPOSE_ERR"
ok "dockerd --default-cgroupns-mode=$other started, images copied"
e2e "dockerd --default-cgroupns-mode=$other" "$other"
