#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Build the images docker-compose.yml runs (and the base image they start
# from), nothing else: no container is started.  .ci/run calls it in the
# background before `make test`, so that a clean machine's cold build
# (debootstrap, then apt and a compile in each image: minutes) runs while
# the tests before the compose test do; that test then waits for it
# (images_lock, scripts/compose-lib.sh) and finds the images built.
# A Docker daemon must answer (scripts/docker-up.sh); this script starts
# none.  Output: build/compose-images.log.  Exit 0 when built, 77 when
# Docker can't run here, 1 on any other failure.
set -uo pipefail
case ${1:-} in
-h | --help) sed -n '3,11s/^# \{0,1\}//p' "$0"; exit 0 ;;
"") ;;
*) echo "compose-images: no options but --help" >&2; exit 2 ;;
esac
COMPOSE_LOG=$(cd "$(dirname "$0")/.." && pwd)/build/compose-images.log
. "$(dirname "$0")/compose-lib.sh"
mkdir -p "$(dirname "$COMPOSE_LOG")"
docker info >/dev/null 2>&1 || { echo "compose-images: no Docker daemon answers" >&2; exit 77; }
rc=0
compose_setup "nsmimages$$" 172.29.86.0/24 || rc=$?
# only the compose command's project handle: nothing was brought up
COMPOSE=()
[ $rc = 0 ] || { echo "compose-images: $COMPOSE_ERR" >&2; exit $rc; }
echo "compose-images: built (base $BASE_IMAGE)"
