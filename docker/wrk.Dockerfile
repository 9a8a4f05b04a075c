# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The load generator and body checker of the compose bench and test.  It
# idles (sleep) and runs each wrk/curl through `exec`, so every run comes
# from the same container, i.e. the same cgroup, which the agent follows
# once (a fresh container per run would be a new cgroup the agent has not
# seen yet when the run's connections open).
ARG BASE_IMAGE=debian:bookworm
FROM ${BASE_IMAGE}
RUN apt-get update -qq && \
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wrk curl && \
    rm -rf /var/lib/apt/lists/*
CMD ["sleep", "infinity"]
