#!/usr/bin/env bash
# Set up everything and run the main job on the embedded default: a Docker engine and
# debootstrap (Debian packages, installed when missing), a virtualenv, the API on a SQLite
# store, then a Swarm cluster (1 manager, 2 workers) on local container nodes created with
# the real `openstack coe` client, followed until it is done, and `docker node ls` through
# its TLS endpoint with the configuration `coe cluster config` writes.
# Running it again reuses what exists (the cluster it made is found by the uuid it
# recorded in .run/, whatever other clusters are named); a cluster of its that failed
# (CREATE_FAILED, DELETE_FAILED) is deleted and made again.
#
#   ./quickstart.sh              set up and run the main job
#   ./quickstart.sh down         delete the cluster and template it made (and its client
#                                configuration in .run/), then stop the API and the dockerd
#                                it started - only those: their pids are in .run/*.pid, and
#                                a dockerd that was running before is left running
#   ./quickstart.sh down --purge also what a next run would reuse: the store and job
#                                logs in .run/, the local node image and its build cache
#                                (~/.cache/openstack-magnum/node-image, ~1.4 GB in all)
#
# It stops with a message and a non-zero exit when something it needs cannot be had or
# started, when the cluster does not end CREATE_COMPLETE (`up`) or is not deleted (`down`).
# What installers print goes to .run/install.log, named on the screen.
set -euo pipefail
# python-magnumclient's `cluster config` reads $SHELL, unset under some CI/cron runners
export SHELL=${SHELL:-/bin/bash}
top=$(cd "$(dirname "$0")" && pwd)
cd "$top"
port=${MAGNUM_API_PORT:-9511}
api_url=http://127.0.0.1:$port
state=${MAGNUM_STATE_DIR:-$top/.run}
mkdir -p "$state"
log=$state/install.log
template=${TEMPLATE:-swarm-tpl}
cluster=${CLUSTER:-swarm}
uuid_file=$state/$cluster.uuid
export PATH="$top/.venv/bin:$PATH"
sudo=$([ "$(id -u)" = 0 ] || echo sudo)

say() { echo "== $*"; }
die() { echo "quickstart: $*" >&2; exit 1; }
log_tail() { echo "the last lines of $1:"; tail -n "${2:-15}" "$1" 2>/dev/null | sed 's/^/    /'; }
coe() { openstack --os-auth-type none --os-endpoint "$api_url/v1" coe "$@"; }

stop_pid() {  # the process whose pid the file holds, if it is still the one started
  local file=$state/$1.pid pid
  [ -f "$file" ] || return 0
  pid=$(cat "$file")
  if $sudo kill "$pid" 2>/dev/null; then
    echo "== stopped $1 (pid $pid)"
    for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
  fi
  rm -f "$file"
}

# --- what the job needs: an engine that answers, debootstrap, a virtualenv, the API ---

# answers_while_alive <check> <pid> <tries> <pause>: 0 once <check> succeeds; 1 once the
# process <pid> is gone or the tries are spent
answers_while_alive() {
  local _
  for _ in $(seq "$3"); do
    "$1" && return 0
    kill -0 "$2" 2>/dev/null || return 1
    sleep "$4"
  done
  return 1
}

engine() { echo "${DOCKER_HOST:-unix:///var/run/docker.sock}"; }
engine_answers() { command -v docker >/dev/null && docker info >/dev/null 2>&1; }

install_packages() {  # Debian packages, their installers' output in the log
  say "installing $* (Debian packages; output in $log)"
  { $sudo apt-get update && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y "$@"; } \
    >>"$log" 2>&1 || die "could not install $*; $(log_tail "$log")"
}

ensure_tools() {
  local need=()
  if ! engine_answers; then
    # the client, and the engine unless DOCKER_HOST names one elsewhere
    if ! command -v docker >/dev/null || { [ -z "${DOCKER_HOST:-}" ] && ! command -v dockerd >/dev/null; }; then
      need+=(docker.io)
    fi
  fi
  command -v debootstrap >/dev/null || need+=(debootstrap)
  command -v curl >/dev/null || need+=(curl)
  [ -x .venv/bin/python ] || python3 -c 'import ensurepip' 2>/dev/null || need+=(python3-venv)
  if [ ${#need[@]} -gt 0 ]; then install_packages "${need[@]}"; fi
  command -v debootstrap >/dev/null || die "debootstrap is not on PATH after installing it"
}

ensure_engine() {
  engine_answers && return 0
  command -v docker >/dev/null || die "no docker client on PATH after installing docker.io"
  [ -z "${DOCKER_HOST:-}" ] ||
    die "the Docker engine at $DOCKER_HOST does not answer: $(docker info 2>&1 | tail -n 1)"
  command -v dockerd >/dev/null ||
    die "no Docker engine: dockerd is not on PATH after installing docker.io"
  say "starting dockerd (log: $state/dockerd.log)"
  $sudo sh -c "nohup dockerd >'$state/dockerd.log' 2>&1 & echo \$! >'$state/dockerd.pid'"
  answers_while_alive engine_answers "$(cat "$state/dockerd.pid")" 60 1 && return 0
  stop_pid dockerd >/dev/null
  die "the Docker engine did not start ($(engine) does not answer); $(log_tail "$state/dockerd.log")"
}

ensure_venv() {
  [ -x .venv/bin/magnum-ansible-api ] && return 0
  say "installing the project into .venv (output in $log)"
  { python3 -m venv .venv && .venv/bin/pip install --upgrade pip &&
      .venv/bin/pip install -e '.[client]'; } >>"$log" 2>&1 ||
    die "could not install the project into .venv; $(log_tail "$log")"
}

api_answers() { curl -sf "$api_url/" >/dev/null; }

ensure_api() {
  api_answers && return 0
  say "starting magnum-ansible-api on :$port (log: $state/api.log)"
  nohup magnum-ansible-api --port "$port" --db "sqlite:///$state/magnum.sqlite" \
    --runner-dir "$state/jobs" >"$state/api.log" 2>&1 &
  echo $! >"$state/api.pid"
  answers_while_alive api_answers $! 150 0.2 && return 0
  stop_pid api >/dev/null
  die "magnum-ansible-api did not start on :$port; $(log_tail "$state/api.log")"
}

# --- the cluster ---

cluster_state() {  # "<status><TAB><reason>" of the cluster <uuid>; GONE once deleted
  local out code
  out=$(curl -s -w '\n%{http_code}' "$api_url/v1/clusters/$1") && code=${out##*$'\n'} || code=000
  case $code in
    200) python3 -c 'import json, sys; c = json.loads(sys.stdin.read())
print("%s\t%s" % (c["status"], c.get("status_reason") or ""))' <<<"${out%$'\n'*}" ;;
    404) echo GONE ;;
    *) die "the API on :$port does not answer (HTTP $code); $(log_tail "$state/api.log")" ;;
  esac
}

follow() {  # follow <uuid>: until it runs no operation; sets status and reason
  local st task
  while :; do
    st=$(cluster_state "$1") || exit 1
    status=${st%%$'\t'*} reason=${st#*$'\t'}
    case $status in
      *_IN_PROGRESS)
        task=$(curl -sf "$api_url/v1/clusters/$1/jobs?active=1" | python3 -c \
          'import json,sys; j=json.load(sys.stdin)["jobs"]; print(j[0]["current_task"] or "" if j else "")' \
          2>/dev/null) || task=""
        printf '\r%-22s %-70.70s' "$status" "$task"
        sleep 2 ;;
      *) printf '\r%-93s\r' ''; return 0 ;;
    esac
  done
}

delete_cluster() {  # delete_cluster <uuid>: 0 once it is gone; else says why
  coe cluster delete "$1" >/dev/null || return 1
  follow "$1"
  [ "$status" = GONE ] && return 0
  echo "quickstart: cluster $cluster ($1) ended $status: $reason" >&2
  return 1
}

if [ "${1:-}" = down ]; then
  # Whatever happens below, the API and the engine this script started are stopped.
  trap 'stop_pid api; stop_pid dockerd' EXIT
  rc=0
  if [ -f "$uuid_file" ]; then
    id=$(cat "$uuid_file")
    if [ -x .venv/bin/magnum-ansible-api ]; then ensure_api; fi
    st=$(cluster_state "$id")
    if [ "$st" != GONE ]; then
      say "deleting cluster $cluster ($id)"
      if ! delete_cluster "$id"; then
        echo "  retry: make sure the Docker engine answers ($(engine)), then ./quickstart.sh down" >&2
        rc=1
      fi
    fi
    if [ "$rc" = 0 ]; then
      rm -f "$uuid_file"
      rm -rf "$state/$cluster-config"   # its certificates and key, from `coe cluster config`
    fi
  fi
  if [ "$rc" = 0 ] && api_answers; then
    coe cluster template delete "$template" >/dev/null 2>&1 || true
  fi
  if [ "${2:-}" = --purge ]; then
    stop_pid api
    if [ "$rc" = 0 ]; then
      say "removing the local node images and their build cache"
      docker images -q magnum-node 2>/dev/null | sort -u | xargs -r docker rmi -f >/dev/null 2>&1 || true
      rm -rf "${XDG_CACHE_HOME:-$HOME/.cache}/openstack-magnum/node-image"
      stop_pid dockerd
      rm -rf "$state"
    else
      echo "  the store in $state is kept: it records the cluster still to delete" >&2
    fi
  fi
  exit "$rc"
fi

ensure_tools
ensure_engine
ensure_venv
ensure_api

coe cluster template show "$template" >/dev/null 2>&1 ||
  coe cluster template create "$template" --coe swarm --image debian-12 \
    --external-network public --keypair default --docker-storage-driver overlay2 \
    --flavor m1.small --master-flavor m1.small
# Our cluster is the one whose uuid we recorded (names need not be unique); one of ours
# that failed to be made or deleted is deleted and made again.
if [ -f "$uuid_file" ]; then
  id=$(cat "$uuid_file")
  st=$(cluster_state "$id")
  case ${st%%$'\t'*} in
    GONE) rm -f "$uuid_file" ;;
    CREATE_FAILED | DELETE_FAILED)
      say "cluster $cluster ($id) is ${st%%$'\t'*} (${st#*$'\t'}): deleting it to make it again"
      delete_cluster "$id" || exit 1
      rm -f "$uuid_file" ;;
  esac
fi
if [ ! -f "$uuid_file" ]; then
  created=$(coe cluster create "$cluster" --cluster-template "$template" --master-count 1 \
              --node-count 2)
  echo "$created"
  grep -oE '[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}' <<<"$created" | head -1 >"$uuid_file"
fi
id=$(cat "$uuid_file")

say "waiting for $cluster ($id)"
follow "$id"
if [ "$status" = GONE ]; then
  rm -f "$uuid_file"
  die "cluster $cluster ($id) was deleted meanwhile; run ./quickstart.sh again to make it"
fi
coe cluster show "$id" -c status -c status_reason -c api_address -c master_addresses \
  -c node_addresses -c coe_version
case $status in
  *_COMPLETE) ;;
  *)
    echo "quickstart: cluster $cluster ($id) ended $status: $reason" >&2
    echo "  retry: ./quickstart.sh (it deletes the failed cluster and makes it again);" \
         "remove it: ./quickstart.sh down" >&2
    exit 1 ;;
esac
say "docker node ls through the cluster's TLS endpoint"
mkdir -p "$state/$cluster-config"
eval "$(coe cluster config "$id" --dir "$state/$cluster-config" --output-certs --force)"
docker node ls
say "stop it all: ./quickstart.sh down (deletes the cluster, stops what this started)"
