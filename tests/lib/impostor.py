# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""An impostor that copies a victim's 4-tuple and initial sequence numbers,
for impostor_tcp_repair.sh.  Every role takes the shared directory DIR
first; the roles meet through small JSON files there, and every wait is
bounded.

  impostor.py server DIR IP PORT
      The tracked server S: accepts one connection, reads a request line,
      answers "ANSWER:" + 2000 pattern bytes, keeps the connection open
      until DIR/victim.done (10 s at most).  DIR/server.json: request.

  impostor.py victim DIR IFACE MY_MAC MY_IP PEER_MAC PEER_IP PEER_PORT MODE
      A TCP client made of raw frames (AF_PACKET on IFACE, whose own
      kernel has no address MY_IP: it neither answers nor resets).  MODE
      "repair": picks its source port and ISN; "copy": takes both from
      the impostor's SYN (DIR/syn.json).  Sends the SYN, learns S's ISN
      from the SYN-ACK (DIR/handshake.json), waits for DIR/impostor.ready,
      sends the final ACK and a request line, then collects (and ACKs)
      S's answer for 3 s.  DIR/victim.json: what it got.  Ends S's
      connection with a RST.

  impostor.py repair DIR MY_IP PEER_IP PEER_PORT
      The impostor with TCP_REPAIR: waits for DIR/handshake.json, binds
      MY_IP:<the victim's port>, sets its send and receive sequence to the
      victim's ISN + 1 and S's ISN + 1, connects in repair mode (no
      packet, straight to ESTABLISHED), leaves repair mode, writes
      DIR/impostor.ready, then reads for as long as the victim runs.
      DIR/impostor.json: what it got.

  impostor.py copy DIR MY_IP PEER_IP PEER_PORT
      The impostor without TCP_REPAIR: a plain connect() whose SYN the
      responder answers with S's ISN; then as above.

  impostor.py responder DIR IFACE
      In the impostor's namespace, on the interface its SYN leaves by:
      records the SYN (DIR/syn.json: port, ISN), waits for the victim's
      handshake, answers with a SYN-ACK carrying S's ISN.

Checksums are computed here (RFC 791, RFC 793 pseudo-header); frames
carry no TCP options but MSS in the SYN.
"""
import json
import os
import random
import socket
import struct
import sys
import time

ETH_P_IP = 0x0800
ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10
TCP_REPAIR, TCP_REPAIR_QUEUE, TCP_QUEUE_SEQ = 19, 20, 21   # uapi/linux/tcp.h
TCP_RECV_QUEUE, TCP_SEND_QUEUE = 1, 2
TCP_REPAIR_ON, TCP_REPAIR_OFF_NO_WP = 1, -1
ANSWER = b"ANSWER:" + bytes((i * 13 + 5) & 0xFF for i in range(2000))
REQUEST = b"GET /secret HTTP/1.0\n"


def path(d, name):
    return os.path.join(d, name)


def dump(d, name, obj):
    with open(path(d, name) + ".tmp", "w") as f:
        json.dump(obj, f)
    os.rename(path(d, name) + ".tmp", path(d, name))


def wait_json(d, name, secs):
    t = time.monotonic() + secs
    while time.monotonic() < t:
        if os.path.exists(path(d, name)):
            with open(path(d, name)) as f:
                return json.load(f)
        time.sleep(0.01)
    sys.exit("impostor.py: %s did not appear within %d s" % (name, secs))


def exists_soon(d, name, secs):
    t = time.monotonic() + secs
    while time.monotonic() < t and not os.path.exists(path(d, name)):
        time.sleep(0.02)
    return os.path.exists(path(d, name))


def summary(data):
    return {"got": len(data), "head": data[:16].decode("latin-1"),
            "is_answer": data == ANSWER}


# --- frames --------------------------------------------------------------

def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def mac(s):
    return bytes(int(x, 16) for x in s.split(":"))


def frame(src_mac, dst_mac, src_ip, dst_ip, sport, dport, seq, ack, flags,
          payload=b"", mss=None):
    """Ethernet + IPv4 + TCP, checksums filled in."""
    opts = struct.pack("!BBH", 2, 4, mss) if mss else b""
    off = (20 + len(opts)) // 4
    sip, dip = socket.inet_aton(src_ip), socket.inet_aton(dst_ip)
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF,
                      off << 4, flags, 65535, 0, 0) + opts + payload
    pseudo = sip + dip + struct.pack("!BBH", 0, 6, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", csum(pseudo + tcp)) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), random.randrange(65536),
                     0x4000, 64, 6, 0, sip, dip)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return mac(dst_mac) + mac(src_mac) + struct.pack("!H", ETH_P_IP) + ip + tcp


def parse(fr):
    """(src_ip, dst_ip, sport, dport, seq, ack, flags, payload, src_mac) of
    a TCP/IPv4 frame, or None."""
    if len(fr) < 54 or struct.unpack("!H", fr[12:14])[0] != ETH_P_IP:
        return None
    ip = fr[14:]
    ihl = (ip[0] & 15) * 4
    if ip[9] != 6:
        return None
    tot = struct.unpack("!H", ip[2:4])[0]
    tcp = ip[ihl:tot]
    sport, dport, seq, ack, offb, flags = struct.unpack("!HHIIBB", tcp[:14])
    return (socket.inet_ntoa(ip[12:16]), socket.inet_ntoa(ip[16:20]), sport, dport,
            seq, ack, flags, bytes(tcp[(offb >> 4) * 4:]), fr[6:12].hex(":"))


def packet_socket(iface):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((iface, 0))
    s.settimeout(0.1)
    return s


def frames_in(s, match, secs):
    """Yield parsed incoming frames for which match(p) is true, for secs."""
    t = time.monotonic() + secs
    while time.monotonic() < t:
        try:
            fr, addr = s.recvfrom(65535)
        except socket.timeout:
            continue
        if addr[2] == PACKET_OUTGOING:
            continue
        p = parse(fr)
        if p and match(p):
            yield p


# --- roles -----------------------------------------------------------------

def server(d, ip, port):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((ip, port))
    ls.listen(4)
    open(path(d, "server.listening"), "w").close()
    ls.settimeout(20)
    c, peer = ls.accept()
    c.settimeout(0.1)
    req, t = b"", time.monotonic() + 5
    while b"\n" not in req and time.monotonic() < t:
        try:
            b = c.recv(4096)
        except socket.timeout:
            continue
        except BlockingIOError:
            continue
        if not b:
            break
        req += b
    res = {"peer": "%s:%d" % peer, "request": req.decode("latin-1")}
    try:
        c.sendall(ANSWER)
        res["answer"] = "sent"
    except OSError as e:
        res["answer"] = "error:" + str(e)
    dump(d, "server.json", res)
    exists_soon(d, "victim.done", 10)
    c.close()


def victim(d, iface, my_mac, my_ip, peer_mac, peer_ip, peer_port, mode):
    s = packet_socket(iface)
    if mode == "copy":
        syn = wait_json(d, "syn.json", 10)
        sport, isn = syn["port"], syn["isn"]
    else:
        sport, isn = random.randrange(20000, 60000), random.randrange(1 << 32)
    out = lambda seq, ack, flags, data=b"", mss=None: s.send(frame(
        my_mac, peer_mac, my_ip, peer_ip, sport, peer_port, seq, ack, flags, data, mss))
    ours = lambda p: p[0] == peer_ip and p[1] == my_ip and p[2] == peer_port and p[3] == sport
    out(isn, 0, SYN, mss=1460)
    srv_isn = None
    for p in frames_in(s, ours, 5):
        if p[6] & (SYN | ACK) == SYN | ACK and p[5] == (isn + 1) & 0xFFFFFFFF:
            srv_isn = p[4]
            break
    if srv_isn is None:
        sys.exit("victim: no SYN-ACK from %s:%d" % (peer_ip, peer_port))
    dump(d, "handshake.json", {"port": sport, "client_isn": isn, "server_isn": srv_isn})
    if not exists_soon(d, "impostor.ready", 15):
        sys.exit("victim: the impostor never got ready")
    seq, rcv = (isn + 1) & 0xFFFFFFFF, (srv_isn + 1) & 0xFFFFFFFF
    out(seq, rcv, ACK)
    out(seq, rcv, PSH | ACK, REQUEST)
    seq = (seq + len(REQUEST)) & 0xFFFFFFFF
    data, fin = bytearray(), False
    for p in frames_in(s, ours, 3):
        off = (p[4] - rcv) & 0xFFFFFFFF
        if p[7] and off <= len(data):          # in order or overlapping
            data += p[7][len(data) - off:]
            out(seq, rcv + len(data), ACK)
        if p[6] & FIN:
            fin = True
        if p[6] & RST or len(data) >= len(ANSWER):
            break
    dump(d, "victim.json", dict(summary(bytes(data)), fin=fin))
    out(seq, 0, RST)
    open(path(d, "victim.done"), "w").close()


def impostor_read(d, c):
    """Read until the victim is done and one second more (20 s at most)."""
    c.settimeout(0.1)
    data, end = bytearray(), "timeout"
    deadline, hard = None, time.monotonic() + 20
    while time.monotonic() < (deadline or hard):
        if deadline is None and os.path.exists(path(d, "victim.done")):
            deadline = time.monotonic() + 1
        try:
            b = c.recv(65536)
        except (socket.timeout, BlockingIOError):
            continue
        except OSError as e:
            end = "error:" + str(e)
            break
        if not b:
            end = "eof"
            break
        data += b
    else:
        end = "quiet" if deadline else "timeout"
    dump(d, "impostor.json", dict(summary(bytes(data)), end=end))


def repair(d, my_ip, peer_ip, peer_port):
    hs = wait_json(d, "handshake.json", 15)
    c = socket.socket()
    c.setsockopt(socket.IPPROTO_TCP, TCP_REPAIR, TCP_REPAIR_ON)
    c.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    c.bind((my_ip, hs["port"]))
    # the sequence the victim's socket would have after its handshake
    # (net/ipv4/tcp.c, TCP_QUEUE_SEQ: write_seq / rcv_nxt)
    c.setsockopt(socket.IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_SEND_QUEUE)
    c.setsockopt(socket.IPPROTO_TCP, TCP_QUEUE_SEQ,
                 struct.pack("I", (hs["client_isn"] + 1) & 0xFFFFFFFF))
    c.setsockopt(socket.IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_RECV_QUEUE)
    c.setsockopt(socket.IPPROTO_TCP, TCP_QUEUE_SEQ,
                 struct.pack("I", (hs["server_isn"] + 1) & 0xFFFFFFFF))
    # repair mode: tcp_connect() goes straight to tcp_finish_connect(),
    # which runs BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB; nothing is sent
    c.connect((peer_ip, peer_port))
    c.setsockopt(socket.IPPROTO_TCP, TCP_REPAIR, TCP_REPAIR_OFF_NO_WP)
    open(path(d, "impostor.ready"), "w").close()
    impostor_read(d, c)


def copy(d, my_ip, peer_ip, peer_port):
    c = socket.socket()
    c.bind((my_ip, 0))
    c.settimeout(20)
    c.connect((peer_ip, peer_port))    # the responder answers with S's ISN
    open(path(d, "impostor.ready"), "w").close()
    impostor_read(d, c)


def responder(d, iface):
    s = packet_socket(iface)
    my_mac = open("/sys/class/net/%s/address" % iface).read().strip()
    syn = None
    for p in frames_in(s, lambda p: p[6] & (SYN | ACK) == SYN, 10):
        syn = p
        break
    if syn is None:
        sys.exit("responder: no SYN on " + iface)
    src_ip, dst_ip, sport, dport, isn = syn[:5]
    dump(d, "syn.json", {"port": sport, "isn": isn})
    hs = wait_json(d, "handshake.json", 15)
    # back to the MAC the SYN came from, from this interface (the
    # impostor's kernel has S's address as a static neighbour here)
    s.send(frame(my_mac, syn[8], dst_ip, src_ip, dport, sport, hs["server_isn"],
                 (isn + 1) & 0xFFFFFFFF, SYN | ACK, mss=1460))
    exists_soon(d, "victim.done", 20)


if __name__ == "__main__":
    role, d, a = sys.argv[1], sys.argv[2], sys.argv[3:]
    if role == "server":
        server(d, a[0], int(a[1]))
    elif role == "victim":
        victim(d, a[0], a[1], a[2], a[3], a[4], int(a[5]), a[6])
    elif role == "repair":
        repair(d, a[0], a[1], int(a[2]))
    elif role == "copy":
        copy(d, a[0], a[1], int(a[2]))
    elif role == "responder":
        responder(d, a[0])
    else:
        sys.exit("usage: see the docstring")
