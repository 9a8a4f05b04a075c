# timeout: 120
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Proves: loopback connections in two network namespaces with identical
# 4-tuples (127.0.0.1:SPORT -> 127.0.0.1:9000, same fixed source port) are
# never paired with each other.  In namespace A only the server is in an
# attached cgroup, in B only the client, so each world has exactly one
# tracked end whose mirror-image twin is tracked in the other world.  The
# two connections are open at the same time, once with A established first
# and once with B first.  Each client sends its own seeded pattern and each
# server must receive exactly its own namespace's bytes (and answer with a
# pattern of its own seed that its client checks); pairs and
# redirected_msgs must not move at all, while sockets_total shows the
# attached ends were tracked.  Then with all four cgroups attached: the
# twins are registered at the same time under the same 4-tuple, and only
# the namespace cookie in the key tells them apart, so every connection
# must pair, in its own namespace, none as ambiguous.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/tcpkit.sh"
. "$(dirname "$0")/../lib/isolation.sh"
iso_cgroups
ns_new NA a
ns_new NB b
# each world in one namespace: client and server share it
NAC=$NA NAS=$NA NBC=$NB NBS=$NB
SRV_IP=127.0.0.1 CLI_IP=127.0.0.1 SEED_A=1111 SEED_B=2222
agent_start -c "$CAS" -c "$CBC"
iso_run "no pair formed across namespaces"
agent_start -c "$CAS" -c "$CAC" -c "$CBC" -c "$CBS"
iso_run_both_tracked
