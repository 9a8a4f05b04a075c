# timeout: 90
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: a ULP set on a tracked socket after the pair formed (kTLS,
# TCP_ULP "tls") never lets the other end see the wrong bytes.  kTLS runs
# the sk_msg verdict on plaintext (net/tls/tls_sw.c bpf_exec_tx_verdict),
# so a redirect hands plaintext to a peer that expects TLS records
# (KERNEL-FACTS "ULPs").  One fixed AES-GCM-128 key, IV and sequence, so
# the same plaintext gives the same records on every connection:
#  (a) the sender sets TCP_ULP "tls" + TLS_TX once the pair is up and
#      sends 26000 bytes of plaintext in three sends; a plain reader must
#      read TLS records (0x17 0x03 0x03 ...) byte-identical to what the
#      same sequence gives without the agent;
#  (b) the reader sets TCP_ULP "tls" + TLS_RX; a plain sender sends the
#      records from (a)'s reference; the reader must read the plaintext.
# Two other outcomes are allowed: the connection ends with a reset on both
# ends and resets.ulp counts it; or setsockopt(TCP_ULP) fails with EPERM
# on the tracked socket, ulp_refused counts it, the ends carry on with TLS
# in user space as OpenSSL does (the probe sends/reads the records
# themselves) and the reader gets exactly the records plain TCP carries.  Needs the `tls` module: SKIPs where it is
# missing (this host); the Debian kernels in the VM tests have it.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
PY=$TOP/tests/lib/ktls_probe.py
modprobe tls 2>/dev/null
why=$(python3 "$PY" check 2>&1) ||
	skip "SKIP: no kTLS on this kernel ($(uname -r)): modprobe tls failed; $why"
cg_new CS srv
cg_new CC cli
python3 "$PY" plaintext "$TMP/plain.bin"

jget() {
	python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))[sys.argv[2]]
print(v if isinstance(v, str) else json.dumps(v))' "$1" "$2" 2>/dev/null || echo "(no $2 in $1)"
}

# probe NAME READER_ARG SENDER_ARG: one connection, results in $TMP/NAME.*
probe() {
	local name=$1 rarg=$2 sarg=$3 x
	cg_exec "$CS" python3 "$PY" reader "$TMP" "$name" $rarg >"$TMP/$name.rlog" 2>&1 &
	PID[$name]=$!
	on_exit "kill ${PID[$name]}"
	wait_file "$TMP/$name.port" "$name: reader listening"
	cg_exec "$CC" timeout 30 python3 "$PY" sender "$(cat "$TMP/$name.port")" "$TMP" "$name" \
		"$sarg" >"$TMP/$name.slog" 2>&1 || { cat "$TMP/$name.slog"; fail "$name: sender failed"; }
	wait "${PID[$name]}"
	for x in reader sender; do
		[ -s "$TMP/$name.$x.json" ] || { cat "$TMP/$name.${x:0:1}log"; fail "$name: $x wrote no result"; }
		log "$name $x: $(cat "$TMP/$name.$x.json")"
	done
}

# reset_ok NAME R0: the connection ended with a reset on both ends and
# resets.ulp (R0 before) counted it
reset_ok() {
	local r1
	case $(jget "$TMP/$1.sender.json" sends) in
	*error:*) ok "$1: the sender saw an error" ;;
	*) fail "$1: the reader was reset but every send succeeded" ;;
	esac
	[ "$2" = missing ] && fail "status --json has no resets.ulp"
	st r1 resets.ulp
	assert_eq $((r1 - $2)) 1 "$1: resets.ulp counted the connection"
}

# References, plain TCP
probe ref_tx "" tx
assert_eq "$(jget "$TMP/ref_tx.sender.json" ulp)" ok "plain TCP: TCP_ULP tls + TLS_TX on the sender"
assert_eq "$(jget "$TMP/ref_tx.reader.json" head)" 1703030400 \
	"plain TCP: the plain reader reads a TLS 1.2 application-data record (1000 + 24 bytes)"
probe ref_rx rx "$TMP/ref_tx.bin"
assert_eq "$(jget "$TMP/ref_rx.reader.json" ulp)" ok "plain TCP: TCP_ULP tls + TLS_RX on the reader"
cmp -s "$TMP/ref_rx.bin" "$TMP/plain.bin" || fail "plain TCP: the kTLS reader did not get the plaintext"
ok "plain TCP: the kTLS reader decrypts the records to the plaintext"

agent_start -c "$CS" -c "$CC"
export KTLS_FALLBACK_RECORDS=$TMP/ref_tx.bin
for name in tx rx; do
	st p0 pairs
	st u0 ulp_refused
	r0=$(stat_get resets.ulp 2>/dev/null || echo missing)
	if [ $name = tx ]; then
		probe tracked_tx "" tx
		want=$TMP/ref_tx.bin what="the TLS records plain TCP carries"
	else
		probe tracked_rx rx "$TMP/ref_tx.bin"
		want=$TMP/plain.bin what="the plaintext"
	fi
	st p1 pairs
	log "$name: pairs +$((p1 - p0)), resets.ulp before: $r0"
	assert_ge $((p1 - p0)) 1 "$name: the pair formed before the ULP was set"
	assert_eq "$(jget "$TMP/tracked_$name.sender.json" hello)" R "$name: the sender got the reader's first byte"
	if [ "$(jget "$TMP/tracked_$name.reader.json" end)" = reset ]; then
		reset_ok tracked_$name "$r0"
		continue
	fi
	side=$([ $name = tx ] && echo sender || echo reader)
	if [ "$(jget "$TMP/tracked_$name.$side.json" ulp)" = error:ulp:EPERM ]; then
		st u1 ulp_refused
		assert_eq $((u1 - u0)) 1 "$name: TCP_ULP refused (EPERM) on the tracked $side, ulp_refused counted it"
		cmp -s "$TMP/tracked_$name.bin" "$TMP/ref_tx.bin" ||
			fail "$name: after the refusal the reader got $(stat -c %s "$TMP/tracked_$name.bin") bytes, not the records user-space TLS sent"
		ok "$name: after the refusal the reader got exactly the TLS records"
		assert_eq "$(jget "$TMP/tracked_$name.reader.json" end)" eof "$name: the reader read to EOF"
		continue
	fi
	assert_eq "$(jget "$TMP/tracked_$name.reader.json" ulp)" "$(jget "$TMP/ref_$name.reader.json" ulp)" \
		"$name: the reader's TCP_ULP/TLS setup went as with plain TCP"
	assert_eq "$(jget "$TMP/tracked_$name.sender.json" ulp)" "$(jget "$TMP/ref_$name.sender.json" ulp)" \
		"$name: the sender's TCP_ULP/TLS setup went as with plain TCP"
	if ! cmp -s "$TMP/tracked_$name.bin" "$want"; then
		fail "$name: the reader got $(stat -c %s "$TMP/tracked_$name.bin") bytes starting" \
			"$(jget "$TMP/tracked_$name.reader.json" head), not $what" \
			"($(stat -c %s "$want") bytes starting $(head -c 5 "$want" | od -An -tx1 | tr -d ' '))"
	fi
	ok "$name: the reader got exactly $what"
	assert_eq "$(jget "$TMP/tracked_$name.reader.json" end)" eof "$name: the reader read to EOF"
done
agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"
