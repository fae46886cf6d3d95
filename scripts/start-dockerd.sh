#!/usr/bin/env bash
# Start a Docker engine in the background if none answers (machines without systemd, CI). An engine that
# is already running is left alone, also when this user cannot reach its socket yet (not in the docker
# group: asked through sudo).
set -euo pipefail
SUDO=""; [ "$(id -u)" != "0" ] && SUDO="sudo"
answers() { docker info >/dev/null 2>&1 || { [ -n "$SUDO" ] && $SUDO -n docker info >/dev/null 2>&1; }; }
if answers; then exit 0; fi
if [ -n "$SUDO" ] && $SUDO docker info >/dev/null 2>&1; then exit 0; fi
echo "start-dockerd.sh: starting dockerd in the background (log: /tmp/dockerd.log)" >&2
$SUDO sh -c 'nohup dockerd >/tmp/dockerd.log 2>&1 &'
for _ in $(seq 1 60); do
  answers && exit 0
  sleep 1
done
echo "start-dockerd.sh: dockerd did not come up in 60 s; see /tmp/dockerd.log" >&2
tail -20 /tmp/dockerd.log >&2 || true
exit 1
