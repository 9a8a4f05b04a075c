# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# nginx for the compose setup: one image, two configs rendered at build time
# from the same templates tests and bench use (nginx-conf/*.conf):
#   /etc/ngx-sockmap/proxy.conf     listens on 8080, proxies to upstream:8081
#   /etc/ngx-sockmap/upstream.conf  listens on 8081, serves /small.txt,
#                                   /1m.bin (random, made here) and /hello
# Ports are numbers everywhere: a debootstrap minbase image has no
# /etc/services.
ARG BASE_IMAGE=debian:bookworm
FROM ${BASE_IMAGE}
RUN apt-get update -qq && \
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx && \
    rm -rf /var/lib/apt/lists/*
COPY nginx-conf/proxy.conf nginx-conf/upstream.conf /usr/share/ngx-sockmap/
# @PREFIX@ holds pid, logs and temp files of each instance.  The upstream
# address is the compose service name: Docker's embedded DNS answers it once
# the upstream container exists (nginx depends_on upstream).
RUN set -e; mkdir -p /etc/ngx-sockmap; \
    for p in proxy upstream; do mkdir -p /var/lib/ngx-sockmap/$p/logs; done; \
    sed -e 's|@PREFIX@|/var/lib/ngx-sockmap/proxy|g' \
        -e 's|@LISTEN@|8080 backlog=4096|g' -e 's|@UPSTREAM@|upstream:8081|g' \
        /usr/share/ngx-sockmap/proxy.conf >/etc/ngx-sockmap/proxy.conf; \
    sed -e 's|@PREFIX@|/var/lib/ngx-sockmap/upstream|g' \
        -e 's|@LISTEN@|8081 backlog=4096|g' -e 's|@SENDFILE@|on|g' \
        /usr/share/ngx-sockmap/upstream.conf >/etc/ngx-sockmap/upstream.conf; \
    if sed 's/#.*//' /etc/ngx-sockmap/*.conf | grep '@[A-Z_]*@'; then \
        echo "unrendered placeholder in /etc/ngx-sockmap" >&2; exit 1; fi; \
    html=/var/lib/ngx-sockmap/upstream/html; mkdir -p $html; \
    head -c 256 /dev/zero | tr '\0' 'a' >$html/small.txt; \
    head -c 1048576 /dev/urandom >$html/1m.bin; \
    cd $html && sha256sum small.txt 1m.bin >SHA256SUMS
# Logs to the container's stderr (docker logs) as well as to the prefix.
CMD ["nginx", "-c", "/etc/ngx-sockmap/proxy.conf", "-g", "daemon off; error_log stderr warn;"]
