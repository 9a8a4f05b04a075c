#!/usr/bin/env bash
# timeout: 150
# Proves: `run --k8s-selector` finds the selected, running pods of its node
# through the API server and attaches to each pod's cgroup, under both of
# the kubelet's cgroup drivers; it follows the list as pods come and go.
# No cluster here: a stand-in API server (python) answers GET /api/v1/pods
# for the agent's label and field selectors (it checks they are the ones
# asked for), and the pods' cgroups are made as a kubelet would name them:
#   systemd:  kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod<uid_>.slice
#   cgroupfs: kubepods/burstable/pod<uid>
# The API server is down when the agent starts: it starts without pods and
# attaches them once the API answers.
# An nginx runs in the first pod, a client in the second: their connection
# must be paired and redirected.  A pending pod and a pod of another node
# are in the answer too and must be left alone.
# It watches rather than lists every 2 s: a list, then watches from its
# resourceVersion (the stand-in streams ADDED/MODIFIED/DELETED and
# BOOKMARK events, ends each watch after 3 s, and can answer 410 Gone):
# no list while nothing fails, a watch taken up again from the last
# version, a new list after 410 Gone.
# Last, --k8s-namespace web,shop: the agent asks each namespace's list
# (GET /api/v1/namespaces/NS/pods, what a Role there allows), never the
# cluster's, and leaves a selected pod of another namespace alone; with
# three namespaces whose lists take 6 s each, the loop keeps ticking
# (`health --max-age 8` holds) and the namespace that answers is attached.
. "$(dirname "$0")/../lib/common.sh"
PORT=18320 API=18321
U1=11111111-2222-3333-4444-555555555555 # nginx pod (systemd layout)
U2=66666666-7777-8888-9999-000000000000 # client pod (cgroupfs layout)
U3=aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee # pending
SD=$CG2/ngx-sockmap-test.$RUN_TAG.$$.kubepods.slice
CF=$CG2/ngx-sockmap-test.$RUN_TAG.$$.kubepods
P1=$SD/kubepods-besteffort.slice/kubepods-besteffort-pod${U1//-/_}.slice
P2=$CF/burstable/pod$U2
mkdir -p "$P1" "$P2" "$CF/burstable/pod$U3" || fail "mkdir pod cgroups"
on_exit "rmdir '$P1' '$SD/kubepods-besteffort.slice' '$SD' '$P2' '$CF/burstable/pod$U3' '$CF/burstable' '$CF'"
on_exit 'cg_remove "$P1"; cg_remove "$P2"'

# The stand-in API: pods from $TMP/pods.json, filtered as the API would
# by the label and field selectors the agent sends (and those must be ours).
cat >"$TMP/api.py" <<'PY'
import json, os, sys, threading, time, urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
port, pods_file, log = int(sys.argv[1]), sys.argv[2], sys.argv[3]
gone_file = pods_file + ".gone"  # exists: the next watch is told 410 Gone
# every version of pods.json seen, by resourceVersion (as the API's etcd
# keeps them): a watch from one of them gets the changes since
history, lock = {}, threading.Lock()
def poll():
    last = None
    while True:
        try:
            text = open(pods_file).read()
            pods = json.loads(text)
        except (OSError, ValueError):
            pods = None
        if pods is not None and text != last:
            with lock:
                history[str(len(history) + 1)] = pods
            last = text
        time.sleep(0.05)
threading.Thread(target=poll, daemon=True).start()
def current():
    with lock:
        while not history:
            lock.release(); time.sleep(0.05); lock.acquire()
        rv = str(len(history))
        return rv, history[rv]
def ours(pods, node, ns):
    return {p["metadata"]["uid"]: p for p in pods
            if p["spec"]["nodeName"] == node and ns in (None, p["metadata"]["namespace"])}
class H(BaseHTTPRequestHandler):
    def do_GET(self):
        u = urllib.parse.urlparse(self.path)
        q = urllib.parse.parse_qs(u.query)
        with open(log, "a") as f:
            f.write(self.path + "\n")
        parts = u.path.split("/")
        ns = parts[4] if len(parts) == 6 and parts[3] == "namespaces" and parts[5] == "pods" else None
        if (u.path != "/api/v1/pods" and ns is None) or \
                q.get("labelSelector") != ["app.kubernetes.io/name=nginx"]:
            self.send_response(400); self.end_headers(); return
        if ns and ns.startswith("slow"):
            time.sleep(6)  # an API server under load, past the agent's 5 s
        node = q.get("fieldSelector", [""])[0].removeprefix("spec.nodeName=")
        if q.get("watch") == ["1"]:
            return self.watch(q, node, ns)
        rv, pods = current()
        items = list(ours(pods, node, ns).values())
        body = json.dumps({"kind": "PodList", "metadata": {"resourceVersion": rv},
                           "items": items}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)
    def event(self, type_, obj):
        self.wfile.write((json.dumps({"type": type_, "object": obj}) + "\n").encode())
        self.wfile.flush()
    def watch(self, q, node, ns):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        sent = q.get("resourceVersion", [""])[0]
        with lock:
            old = history.get(sent)
        if old is None or os.path.exists(gone_file):
            if os.path.exists(gone_file):
                os.unlink(gone_file)
            self.event("ERROR", {"kind": "Status", "code": 410, "reason": "Expired",
                                 "message": "too old resource version: " + sent})
            return
        seen = ours(old, node, ns)
        # this server ends a watch after 3 s (the API after timeoutSeconds,
        # or sooner): the agent watches again from the last version
        end = time.time() + 3
        while time.time() < end:
            rv, pods = current()
            if rv != sent:
                now = ours(pods, node, ns)
                for uid, p in now.items():
                    p = dict(p, metadata=dict(p["metadata"], resourceVersion=rv))
                    if uid not in seen:
                        self.event("ADDED", p)
                    elif now[uid] != seen[uid]:
                        self.event("MODIFIED", p)
                for uid, p in seen.items():
                    if uid not in now:
                        self.event("DELETED", dict(p, metadata=dict(p["metadata"], resourceVersion=rv)))
                seen, sent = now, rv
            self.event("BOOKMARK", {"kind": "Pod", "metadata": {"resourceVersion": sent}})
            time.sleep(0.2)
    def log_message(self, *a): pass
class S(ThreadingHTTPServer):
    def handle_error(self, *a): pass  # the agent hung up: its right
S(("127.0.0.1", port), H).serve_forever()
PY
pod() { # pod UID NAME NODE PHASE [NAMESPACE]
	printf '{"metadata":{"uid":"%s","name":"%s","namespace":"%s"},"spec":{"nodeName":"%s"},"status":{"phase":"%s"}}' \
		"$1" "$2" "${5:-web}" "$3" "$4"
}
echo "[$(pod $U1 nginx-0 node-a Running),$(pod $U2 client-0 node-a Running),$(pod $U3 nginx-1 node-a Pending),$(pod 99999999-0000-0000-0000-000000000000 nginx-2 node-b Running)]" >"$TMP/pods.json"

up=$(nginx_start up upstream.conf "$P1" LISTEN=127.0.0.1:$PORT SENDFILE=off)
wait_port 127.0.0.1 $PORT
head -c 20000 /dev/zero >"$up/html/20k.bin"

# the API server is down when the agent starts (a control plane upgrade):
# the agent starts all the same, with no pod, instead of exiting (a
# crash loop under a DaemonSet), and attaches them once the API answers
agent_start --k8s-selector app.kubernetes.io/name=nginx --k8s-node node-a \
	--k8s-api http://127.0.0.1:$API
paths() { "$AGENT" status --json | python3 -c 'import json,sys; print(" ".join(sorted(c["path"] for c in json.load(sys.stdin)["cgroups"])))'; }
assert_eq "$(paths)" "" "started with the API server down: no pod attached yet"
grep -q "starting without pods" "$TMP/agent.err" || fail "the log does not say it started without pods: $(cat "$TMP/agent.err")"
ok "the log says it started without pods"
python3 "$TMP/api.py" $API "$TMP/pods.json" "$TMP/api.log" &
api_pid=$!
on_exit "kill $api_pid 2>/dev/null"
wait_port 127.0.0.1 $API
want="$(printf '%s\n' "$P1" "$P2" | sort | tr '\n' ' ' | sed 's/ $//')"
for _ in $(seq 1 50); do [ "$(paths)" = "$want" ] && break; sleep 0.2; done
grep -q "fieldSelector=spec.nodeName%3Dnode-a" "$TMP/api.log" ||
	fail "the agent did not ask for its node's pods: $(cat "$TMP/api.log")"
ok "asked the API for the selected pods of node-a"
assert_eq "$(paths)" "$want" \
	"attached to the two running pods' cgroups (systemd and cgroupfs layouts), not the pending one"
"$AGENT" status --json | grep -q '"reason":"k8s pod web/nginx-0"' || fail "status does not name the pod"
ok "status names the pods"

st r0 redirected_msgs
cg_exec "$P2" curl --noproxy '*' -sS --max-time 10 -o "$TMP/body" "http://127.0.0.1:$PORT/20k.bin" ||
	fail "curl from the client pod failed"
[ "$(stat -c %s "$TMP/body")" = 20000 ] || fail "short body"
st r1 redirected_msgs
assert_ge $((r1 - r0)) 1 "the client pod's request to the nginx pod was redirected"

# watched, not listed again and again: a list, then watches from its
# resourceVersion; this API ends each watch after 3 s, and the agent
# watches again from the last version it saw, without listing
watching() { grep -q 'watch=1&allowWatchBookmarks=true&timeoutSeconds=[0-9]*&resourceVersion=[0-9]' "$TMP/api.log"; }
for _ in $(seq 1 25); do watching && break; sleep 0.2; done
watching ||
	fail "the agent does not watch from a resourceVersion: $(cat "$TMP/api.log")"
ok "watches the pods from the list's resourceVersion"
lists() { grep -vc 'watch=1' "$TMP/api.log"; }
watches() { grep -c 'watch=1' "$TMP/api.log"; }
l0=$(lists) w0=$(watches) t0=$SECONDS
for _ in $(seq 1 100); do [ $(($(watches) - w0)) -ge 2 ] && break; sleep 0.2; done
assert_ge $(($(watches) - w0)) 2 "two watches the server ended were taken up again"
assert_eq "$(lists)" "$l0" "and no list meanwhile ($((SECONDS - t0)) s; it was one every 2 s)"

# the client pod goes away from the answer: detached as the event comes
echo "[$(pod $U1 nginx-0 node-a Running)]" >"$TMP/pods.json"
for _ in $(seq 1 40); do [ "$(paths)" = "$P1" ] && break; sleep 0.2; done
assert_eq "$(paths)" "$P1" "a pod no longer selected is detached"

# 410 Gone (the version watched from is older than the server keeps):
# the agent lists again, then watches from the new list
l0=$(lists)
touch "$TMP/pods.json.gone"
for _ in $(seq 1 50); do [ "$(lists)" -gt "$l0" ] && break; sleep 0.2; done
assert_ge "$(lists)" $((l0 + 1)) "ERROR 410 Gone: listed again"
echo "[$(pod $U1 nginx-0 node-a Running),$(pod $U2 client-0 node-a Running)]" >"$TMP/pods.json"
want="$(printf '%s\n' "$P1" "$P2" | sort | tr '\n' ' ' | sed 's/ $//')"
for _ in $(seq 1 40); do [ "$(paths)" = "$want" ] && break; sleep 0.2; done
assert_eq "$(paths)" "$want" "after the new list, the watch's events apply again (the client pod is back)"
echo "[$(pod $U1 nginx-0 node-a Running)]" >"$TMP/pods.json"
for _ in $(seq 1 40); do [ "$(paths)" = "$P1" ] && break; sleep 0.2; done
assert_eq "$(paths)" "$P1" "and gone again"

# the API goes away: the agent keeps what it has (a flapping API server
# must not detach Nginx) and says why in its log
kill "$api_pid"; wait "$api_pid" 2>/dev/null
sleep 4.5
assert_eq "$(paths)" "$P1" "pods kept while the API server does not answer"
grep -q "k8s: GET" "$TMP/agent.err" || fail "no word in the log about the unreachable API"
ok "the log says the API did not answer"
agent_stop || fail "agent did not exit 0"

# --k8s-namespace: the client pod is in another tenant's namespace now
echo "[$(pod $U1 nginx-0 node-a Running),$(pod $U2 client-0 node-a Running other)]" >"$TMP/pods.json"
: >"$TMP/api.log"
python3 "$TMP/api.py" $API "$TMP/pods.json" "$TMP/api.log" &
api_pid=$!
on_exit "kill $api_pid 2>/dev/null"
wait_port 127.0.0.1 $API
agent_start --k8s-selector app.kubernetes.io/name=nginx --k8s-node node-a \
	--k8s-api http://127.0.0.1:$API --k8s-namespace web,shop
assert_eq "$(paths)" "$P1" "--k8s-namespace web,shop: the pod of namespace other is left alone"
grep -q '^/api/v1/namespaces/web/pods?' "$TMP/api.log" &&
	grep -q '^/api/v1/namespaces/shop/pods?' "$TMP/api.log" ||
	fail "the agent did not ask each namespace: $(cat "$TMP/api.log")"
ok "asked /api/v1/namespaces/{web,shop}/pods"
! grep -q '^/api/v1/pods' "$TMP/api.log" || fail "the agent asked for every namespace's pods"
ok "never asked for every namespace's pods"
agent_stop || fail "agent did not exit 0"

# a slow API: lists of three namespaces that take 6 s each would stall a
# loop that waited for them (past the guard's 15 s heartbeat with the
# next tick's work, and the liveness probe's age).  At start the agent
# asks for at most 5 s in all; then its loop never waits for the API:
# each namespace's list runs beside the loop, gives up after 5 s, and is
# asked again later, while the namespace that answers is attached
agent_start --k8s-selector app.kubernetes.io/name=nginx --k8s-node node-a \
	--k8s-api http://127.0.0.1:$API --k8s-namespace web,slowa,slowb,slowc
for _ in $(seq 1 24); do
	"$AGENT" health --max-age 8 >"$TMP/health" 2>&1 ||
		fail "the loop stalled behind the slow API: $(cat "$TMP/health")"
	sleep 0.5
done
ok "health --max-age 8 held for 12 s while each slow namespace's list took 6 s"
grep -q "k8s: GET http://127.0.0.1:$API" "$TMP/agent.err" ||
	fail "no word in the log about the slow API: $(tail -n 3 "$TMP/agent.err")"
ok "the log says the API was too slow"
assert_eq "$(paths)" "$P1" "the namespace that answered (web) is attached meanwhile"
agent_stop || fail "agent did not exit 0"
