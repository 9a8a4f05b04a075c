# timeout: 90
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: a ULP set on a tracked socket after the pair formed (kTLS,
# TCP_ULP "tls") never lets the other end see the wrong bytes.  kTLS runs
# the sk_msg verdict on plaintext (net/tls/tls_sw.c bpf_exec_tx_verdict),
# so a redirect would hand plaintext to a peer that expects TLS records
# (docs/DESIGN.md, the guard).  The guard's cgroup/setsockopt program refuses
# TCP_ULP on a tracked socket with EPERM (the only outcome allowed here),
# ulp_refused counts it, and the ends carry on with TLS in user space as
# OpenSSL does (the probe sends/reads the records themselves):
#  (a) the sender sets TCP_ULP "tls" + TLS_TX once the pair is up: refused,
#      it sends the records itself; the reader reads exactly them;
#  (b) the reader sets TCP_ULP "tls" + TLS_RX: refused, it reads the
#      records as they are, exactly what plain TCP carries.
# With the `tls` module (the Debian kernels in the VM tests) the records
# are real: one fixed AES-GCM-128 key, IV and sequence, so the same
# plaintext gives the same records on every connection, and the plain-TCP
# reference must set kTLS up and read a TLS record.  Without it (this host)
# the same refusals are asserted with the plaintext standing in for the
# records: EPERM from the guard, where an untracked socket gets ENOENT.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
PY=$TOP/tests/lib/ktls_probe.py
modprobe tls 2>/dev/null
ktls=1
why=$(python3 "$PY" check 2>&1) || { ktls=0; log "no kTLS here ($(uname -r)): $why"; }
cg_new CS srv
cg_new CC cli
python3 "$PY" plaintext "$TMP/plain.bin"

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

# References, plain TCP
if [ $ktls = 1 ]; then
	probe ref_tx "" tx
	assert_eq "$(jget "$TMP/ref_tx.sender.json" ulp)" ok "plain TCP: TCP_ULP tls + TLS_TX on the sender"
	assert_eq "$(jget "$TMP/ref_tx.reader.json" head)" 1703030400 \
		"plain TCP: the plain reader reads a TLS 1.2 application-data record (1000 + 24 bytes)"
	probe ref_rx rx "$TMP/ref_tx.bin"
	assert_eq "$(jget "$TMP/ref_rx.reader.json" ulp)" ok "plain TCP: TCP_ULP tls + TLS_RX on the reader"
	cmp -s "$TMP/ref_rx.bin" "$TMP/plain.bin" || fail "plain TCP: the kTLS reader did not get the plaintext"
	ok "plain TCP: the kTLS reader decrypts the records to the plaintext"
else
	# the records user-space TLS would send: any bytes do without kTLS
	cp "$TMP/plain.bin" "$TMP/ref_tx.bin"
	KTLS_FALLBACK_RECORDS=$TMP/ref_tx.bin probe ref_tx "" tx
	untracked=$(jget "$TMP/ref_tx.sender.json" ulp)
	case $untracked in
	error:ulp:EPERM) fail "plain TCP: TCP_ULP refused with EPERM without the agent: the test could not tell the guard's refusal" ;;
	error:ulp:*) ok "plain TCP: TCP_ULP tls fails with ${untracked#error:ulp:}, not EPERM, without the agent" ;;
	*) fail "plain TCP: kTLS set up though 'check' said it can't be: $untracked" ;;
	esac
fi

agent_start -c "$CS" -c "$CC"
export KTLS_FALLBACK_RECORDS=$TMP/ref_tx.bin
for name in tx rx; do
	st p0 pairs
	st u0 ulp_refused
	if [ $name = tx ]; then probe tracked_tx "" tx; else probe tracked_rx rx "$TMP/ref_tx.bin"; fi
	st p1 pairs
	log "$name: pairs +$((p1 - p0))"
	assert_ge $((p1 - p0)) 1 "$name: the pair formed before the ULP was set"
	assert_eq "$(jget "$TMP/tracked_$name.sender.json" hello)" R "$name: the sender got the reader's first byte"
	side=$([ $name = tx ] && echo sender || echo reader)
	assert_eq "$(jget "$TMP/tracked_$name.$side.json" ulp)" error:ulp:EPERM \
		"$name: TCP_ULP refused (EPERM) on the tracked $side"
	st u1 ulp_refused
	assert_eq $((u1 - u0)) 1 "$name: ulp_refused counted it"
	cmp -s "$TMP/tracked_$name.bin" "$TMP/ref_tx.bin" ||
		fail "$name: after the refusal the reader got $(stat -c %s "$TMP/tracked_$name.bin") bytes, not the records user-space TLS sent"
	ok "$name: after the refusal the reader got exactly the TLS records"
	assert_eq "$(jget "$TMP/tracked_$name.reader.json" end)" eof "$name: the reader read to EOF"
done
agent_stop || fail "agent did not exit 0 on SIGTERM"
ok "agent exited cleanly"
