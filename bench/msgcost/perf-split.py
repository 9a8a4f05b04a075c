#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# perf-split.py FILE: FILE is `perf script -F comm,ip,sym -i X.perf.data`
# of a bench/msgcost/run --perf block; prints where msg_redirect's samples
# fall: the function the program called (and the leaf under it), or the body.
import sys, re, collections
# perf script output (with callchains): attribute samples whose chain
# passes through the msg_redirect program to their leaf symbol
tot = 0; inprog = collections.Counter(); allsamp = 0
frames = []
def flush():
    global tot, allsamp
    if not frames: return
    allsamp += 1
    syms = [f for f in frames]
    for i, s in enumerate(syms):
        if re.match(r'bpf_prog_[0-9a-f]+_msg_redirect', s):
            tot += 1
            leaf = syms[0]
            if i == 0: leaf = 'msg_redirect (body)'
            elif i >= 1:
                # the helper called from the program: the frame just below it
                leaf = syms[i-1] + (' <- ' + syms[0] if i > 1 else '')
            inprog[leaf] += 1
            break
for line in open(sys.argv[1], errors='replace'):
    line = line.rstrip('\n')
    if not line.strip():
        flush(); frames = []; continue
    if line.startswith('\t') or line.startswith(' '):
        m = re.match(r'\s+[0-9a-f]+\s+(\S+)', line)
        if m:
            frames.append(re.sub(r'\+0x[0-9a-f]+$', '', m.group(1)))
    else:
        frames = []
flush()
print("samples %d, in msg_redirect %d" % (allsamp, tot))
for k, v in inprog.most_common(25):
    print("%6.1f%%  %s" % (100.0 * v / tot, k))
