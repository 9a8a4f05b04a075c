# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""kTLS (TCP_ULP "tls") on one end of a pair, for ktls_ulp.sh.

  ktls_probe.py check                 exit 0 if TCP_ULP "tls" can be set
  ktls_probe.py plaintext FILE        write the plaintext the sender sends
  ktls_probe.py reader DIR NAME [rx]  one connection on 127.0.0.1:0
  ktls_probe.py sender PORT DIR NAME tx|RECORDS_FILE

The reader listens (port in DIR/NAME.port), accepts, sends one byte "R"
(so the sender knows the connection is up on both ends, paired where
the agent pairs it), and with "rx" sets TCP_ULP "tls" and TLS_RX, then
writes DIR/NAME.rx_ready.  It reads until EOF, an error or 3 s without a
byte, writes what it read to DIR/NAME.bin and the outcome to
DIR/NAME.reader.json (got, end, ulp).

The sender connects and reads the "R".  With "tx" it sets TCP_ULP "tls"
and TLS_TX, and sends the plaintext in three sends (1000, 5000, 20000
bytes: kTLS closes a record at each send, so the records are the same on
every run); otherwise it waits for DIR/NAME.rx_ready and sends the bytes
of RECORDS_FILE (TLS records made by a kTLS sender).  It half-closes,
writes DIR/NAME.sender.json (sends: what each send returned, ulp) and
closes when the reader is done.

Where TCP_ULP is refused (the agent refuses it on sockets it tracks), both
ends carry on as OpenSSL does, with TLS in user space: the sender sends the
records of $KTLS_FALLBACK_RECORDS (what user-space TLS with this key makes
of the plaintext), the reader reads the records as they are.

One fixed AES-GCM-128 key, IV, salt and record sequence
(include/uapi/linux/tls.h, struct tls12_crypto_info_aes_gcm_128), so the
same plaintext gives the same ciphertext on every connection.  No
OpenSSL: the kernel does the crypto.
"""
import os
import socket
import struct
import sys
from probekit import err_name, dump, wait_file, listen_local, read_until_quiet

SOL_TLS = 282                 # include/linux/socket.h
TCP_ULP = 31                  # include/uapi/linux/tcp.h
TLS_TX, TLS_RX = 1, 2         # include/uapi/linux/tls.h
TLS_1_2_VERSION = 0x0303
TLS_CIPHER_AES_GCM_128 = 51
KEY = bytes(range(16))
IV = bytes(range(0x20, 0x28))
SALT = b"\x0a\x0b\x0c\x0d"
REC_SEQ = bytes(8)
SIZES = (1000, 5000, 20000)


def crypto_info():
    # struct tls12_crypto_info_aes_gcm_128 { struct tls_crypto_info info
    # { __u16 version; __u16 cipher_type; }; iv[8]; key[16]; salt[4];
    # rec_seq[8]; }: 40 bytes, no padding
    return struct.pack("=HH", TLS_1_2_VERSION, TLS_CIPHER_AES_GCM_128) + IV + KEY + SALT + REC_SEQ


def plaintext():
    return bytes((i * 31 + 7) & 0xFF for i in range(sum(SIZES)))


def set_ktls(s, direction):
    """TCP_ULP "tls" then TLS_TX/TLS_RX: "ok" or "error:NAME" at the step
    that failed."""
    try:
        s.setsockopt(socket.IPPROTO_TCP, TCP_ULP, b"tls")
    except OSError as e:
        return "error:ulp:" + err_name(e)
    try:
        s.setsockopt(SOL_TLS, direction, crypto_info())
    except OSError as e:
        return "error:crypto:" + err_name(e)
    return "ok"


def check():
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(1)
    c = socket.create_connection(ls.getsockname(), timeout=2)
    a, _ = ls.accept()
    r = set_ktls(c, TLS_TX)
    for s in (a, c, ls):
        s.close()
    if r != "ok":
        print("kTLS not usable here: TCP_ULP tls / TLS_TX: " + r)
        sys.exit(1)


def reader(d, name, rx):
    p = os.path.join(d, name)
    ls = listen_local(p + ".port", 10)
    c, _ = ls.accept()
    c.sendall(b"R")
    ulp = "none"
    if rx:
        ulp = set_ktls(c, TLS_RX)
        open(p + ".rx_ready", "w").close()
    data = bytearray()
    end = read_until_quiet(c, 65536, data.extend)
    with open(p + ".bin", "wb") as f:
        f.write(data)
    dump(p + ".reader.json", {"got": len(data), "end": end, "ulp": ulp,
                              "head": data[:5].hex()})
    c.close()


def sender(port, d, name, what):
    p = os.path.join(d, name)
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    hello = s.recv(1)
    res = {"hello": hello.decode("latin-1"), "ulp": "none", "sends": []}
    if what == "tx":
        res["ulp"] = set_ktls(s, TLS_TX)
        pt, chunks, off = plaintext(), [], 0
        for n in SIZES:
            chunks.append(pt[off:off + n])
            off += n
        if res["ulp"].startswith("error:ulp:") and os.environ.get("KTLS_FALLBACK_RECORDS"):
            with open(os.environ["KTLS_FALLBACK_RECORDS"], "rb") as f:
                chunks = [f.read()]  # user-space TLS: the records themselves
    else:
        wait_file(p + ".rx_ready", 10)
        with open(what, "rb") as f:
            chunks = [f.read()]
    for c in chunks:
        try:
            s.sendall(c)
            res["sends"].append(len(c))
        except OSError as e:
            res["sends"].append("error:" + err_name(e))
            break
    try:
        s.shutdown(socket.SHUT_WR)
    except OSError as e:
        res["sends"].append("shutdown:error:" + err_name(e))
    dump(p + ".sender.json", res)
    wait_file(p + ".reader.json", 15)
    s.close()


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "check":
        check()
    elif cmd == "plaintext":
        with open(sys.argv[2], "wb") as f:
            f.write(plaintext())
    elif cmd == "reader":
        reader(sys.argv[2], sys.argv[3], len(sys.argv) > 4 and sys.argv[4] == "rx")
    elif cmd == "sender":
        sender(int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5])
    else:
        sys.exit("usage: see the docstring")
