#!/usr/bin/env bash
# Set up everything and run the main job on the embedded default: Docker engine
# and debootstrap (Debian packages), a virtualenv, the API on a SQLite store, then
# a Swarm cluster (1 manager, 2 workers) on local container nodes created with the
# real `openstack coe` client, followed until it is done, and `docker node ls`
# through its TLS endpoint with the configuration `coe cluster config` writes.
# Running it again reuses what exists (the cluster it made is found by the uuid it
# recorded in .run/, whatever other clusters are named).
#
#   ./quickstart.sh              set up and run the main job
#   ./quickstart.sh down         delete the cluster and template it made (and its client
#                                configuration in .run/), then stop the API and the dockerd
#                                it started - only those: their pids are in .run/*.pid, and
#                                a dockerd that was running before is left running
#   ./quickstart.sh down --purge also what a next run would reuse: the store and job
#                                logs in .run/, the local node image and its build cache
#                                (~/.cache/openstack-magnum/node-image, ~1.4 GB in all)
set -euo pipefail
# python-magnumclient's `cluster config` reads $SHELL, unset under some CI/cron runners
export SHELL=${SHELL:-/bin/bash}
top=$(cd "$(dirname "$0")" && pwd)
cd "$top"
port=${MAGNUM_API_PORT:-9511}
state=${MAGNUM_STATE_DIR:-$top/.run}
mkdir -p "$state"
template=${TEMPLATE:-swarm-tpl}
cluster=${CLUSTER:-swarm}
uuid_file=$state/$cluster.uuid
coe() { openstack --os-auth-type none --os-endpoint "http://127.0.0.1:$port/v1" coe "$@"; }
export PATH="$top/.venv/bin:$PATH"

stop_pid() {  # the process whose pid the file holds, if it is still the one started
  local file=$state/$1.pid
  [ -f "$file" ] || return 0
  if kill "$(cat "$file")" 2>/dev/null; then echo "== stopped $1 (pid $(cat "$file"))"; fi
  rm -f "$file"
}

if [ "${1:-}" = down ]; then
  if curl -sf "http://127.0.0.1:$port/" >/dev/null; then
    if [ -f "$uuid_file" ] && coe cluster show "$(cat "$uuid_file")" >/dev/null 2>&1; then
      echo "== deleting cluster $cluster ($(cat "$uuid_file"))"
      coe cluster delete "$(cat "$uuid_file")"
      while coe cluster show "$(cat "$uuid_file")" >/dev/null 2>&1; do sleep 2; done
    fi
    rm -f "$uuid_file"
    rm -rf "$state/$cluster-config"   # its certificates and key, from `coe cluster config`
    coe cluster template delete "$template" >/dev/null 2>&1 || true
  fi
  stop_pid api
  if [ "${2:-}" = --purge ]; then
    echo "== removing the local node images and their build cache"
    docker images -q magnum-node | sort -u | xargs -r docker rmi -f >/dev/null 2>&1 || true
    rm -rf "${XDG_CACHE_HOME:-$HOME/.cache}/openstack-magnum/node-image"
  fi
  stop_pid dockerd
  if [ "${2:-}" = --purge ]; then rm -rf "$state"; fi
  exit 0
fi

if ! command -v docker >/dev/null || ! command -v debootstrap >/dev/null; then
  echo "== installing docker.io and debootstrap (Debian packages)"
  sudo=$([ "$(id -u)" = 0 ] || echo sudo)
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq docker.io debootstrap python3-venv curl >/dev/null
fi
if ! docker info >/dev/null 2>&1; then
  echo "== starting dockerd (log: $state/dockerd.log)"
  sudo=$([ "$(id -u)" = 0 ] || echo sudo)
  $sudo sh -c "nohup dockerd >'$state/dockerd.log' 2>&1 & echo \$! >'$state/dockerd.pid'"
  for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
fi

if [ ! -x .venv/bin/magnum-ansible-api ]; then
  echo "== installing into .venv"
  python3 -m venv .venv
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -e '.[test]'
fi

if ! curl -sf "http://127.0.0.1:$port/" >/dev/null; then
  echo "== starting magnum-ansible-api on :$port (log: $state/api.log)"
  nohup magnum-ansible-api --port "$port" --db "sqlite:///$state/magnum.sqlite" \
    --runner-dir "$state/jobs" >"$state/api.log" 2>&1 &
  echo $! >"$state/api.pid"
  for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/" >/dev/null && break; sleep 0.2; done
fi

coe cluster template show "$template" >/dev/null 2>&1 ||
  coe cluster template create "$template" --coe swarm --image debian-12 \
    --external-network public --keypair default --docker-storage-driver overlay2 \
    --flavor m1.small --master-flavor m1.small
# Our cluster is the one whose uuid we recorded (names need not be unique).
if ! { [ -f "$uuid_file" ] && coe cluster show "$(cat "$uuid_file")" >/dev/null 2>&1; }; then
  # (printed from a variable: `tee /dev/stderr` would truncate a log both streams go to)
  created=$(coe cluster create "$cluster" --cluster-template "$template" --master-count 1 \
              --node-count 2)
  echo "$created"
  grep -oE '[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}' <<<"$created" | head -1 >"$uuid_file"
fi
id=$(cat "$uuid_file")

echo "== waiting for $cluster ($id)"
while :; do
  status=$(coe cluster show "$id" -c status -f value)
  task=$(curl -sf "http://127.0.0.1:$port/v1/clusters/$id/jobs?active=1" |
         python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"]; print(j[0]["current_task"] or "" if j else "")')
  printf '\r%-22s %-70.70s' "$status" "$task"
  case $status in *_IN_PROGRESS) sleep 2 ;; *) echo; break ;; esac
done
coe cluster show "$id" -c status -c status_reason -c api_address -c master_addresses \
  -c node_addresses -c coe_version
if [ "$status" = CREATE_COMPLETE ] || [ "${status%_COMPLETE}" != "$status" ]; then
  echo "== docker node ls through the cluster's TLS endpoint"
  mkdir -p "$state/$cluster-config"
  eval "$(coe cluster config "$id" --dir "$state/$cluster-config" --output-certs --force)"
  docker node ls
fi
echo "== stop it all: ./quickstart.sh down (deletes the cluster, stops what this started)"
