#!/usr/bin/env bash
# Set up everything and run the main job on the embedded default: Docker engine
# and debootstrap (Debian packages), a virtualenv, the API on a SQLite store, then
# a Swarm cluster (1 manager, 2 workers) on local container nodes created with the
# real `openstack coe` client, followed until it is done, and `docker node ls`
# through its TLS endpoint with the configuration `coe cluster config` writes.
# Running it again reuses what exists.
set -euo pipefail
# python-magnumclient's `cluster config` reads $SHELL, unset under some CI/cron runners
export SHELL=${SHELL:-/bin/bash}
top=$(cd "$(dirname "$0")" && pwd)
cd "$top"
port=${MAGNUM_API_PORT:-9511}
state=${MAGNUM_STATE_DIR:-$top/.run}
mkdir -p "$state"

if ! command -v docker >/dev/null || ! command -v debootstrap >/dev/null; then
  echo "== installing docker.io and debootstrap (Debian packages)"
  sudo=$([ "$(id -u)" = 0 ] || echo sudo)
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq docker.io debootstrap python3-venv curl >/dev/null
fi
if ! docker info >/dev/null 2>&1; then
  echo "== starting dockerd (log: $state/dockerd.log)"
  sudo=$([ "$(id -u)" = 0 ] || echo sudo)
  $sudo sh -c "nohup dockerd >'$state/dockerd.log' 2>&1 &"
  for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
fi

if [ ! -x .venv/bin/magnum-ansible-api ]; then
  echo "== installing into .venv"
  python3 -m venv .venv
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -e '.[test]'
fi
export PATH="$top/.venv/bin:$PATH"

if ! curl -sf "http://127.0.0.1:$port/" >/dev/null; then
  echo "== starting magnum-ansible-api on :$port (log: $state/api.log)"
  nohup magnum-ansible-api --port "$port" --db "sqlite:///$state/magnum.sqlite" \
    --runner-dir "$state/jobs" >"$state/api.log" 2>&1 &
  for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/" >/dev/null && break; sleep 0.2; done
fi

coe() { openstack --os-auth-type none --os-endpoint "http://127.0.0.1:$port/v1" coe "$@"; }
template=${TEMPLATE:-swarm-tpl}
cluster=${CLUSTER:-swarm}
coe cluster template show "$template" >/dev/null 2>&1 ||
  coe cluster template create "$template" --coe swarm --image debian-12 \
    --external-network public --keypair default --docker-storage-driver overlay2 \
    --flavor m1.small --master-flavor m1.small
coe cluster show "$cluster" >/dev/null 2>&1 ||
  coe cluster create "$cluster" --cluster-template "$template" --master-count 1 --node-count 2

echo "== waiting for $cluster"
while :; do
  status=$(coe cluster show "$cluster" -c status -f value)
  task=$(curl -sf "http://127.0.0.1:$port/v1/clusters/$cluster/jobs?active=1" |
         python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"]; print(j[0]["current_task"] or "" if j else "")')
  printf '\r%-22s %-70.70s' "$status" "$task"
  case $status in *_IN_PROGRESS) sleep 2 ;; *) echo; break ;; esac
done
coe cluster show "$cluster" -c status -c status_reason -c api_address -c master_addresses \
  -c node_addresses -c coe_version
if [ "$status" = CREATE_COMPLETE ] || [ "${status%_COMPLETE}" != "$status" ]; then
  echo "== docker node ls through the cluster's TLS endpoint"
  mkdir -p "$state/$cluster-config"
  eval "$(coe cluster config "$cluster" --dir "$state/$cluster-config" --output-certs --force)"
  docker node ls
fi
