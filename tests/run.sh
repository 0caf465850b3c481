#!/usr/bin/env bash
# The whole test suite: pytest (core, store on SQLite and PostgreSQL, API, jobs,
# real clients, crash recovery, REST/playbook parity), ansible-test sanity,
# molecule scenarios, ansible-lint, and a collection build + install.
# Run inside the project's virtualenv (see README.md). PostgreSQL store tests run
# when MAGNUM_TEST_PG_URL is set and are reported as skipped otherwise.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

# Where the time goes (tests/timings.py prints it at the end, failed or not): each
# phase's wall time, appended to MAGNUM_CI_PHASES (.ci/run records its own phases there
# first), and the pytest runs' JUnit reports.
phases=${MAGNUM_CI_PHASES:-$(mktemp)}
reports=$(mktemp -d)
phase_start=$(date +%s)
phase() {  # phase <name>: the time since the last phase ended
  local now; now=$(date +%s)
  echo "$1 $((now - phase_start))" >>"$phases"
  phase_start=$now
}
summary() { python tests/timings.py "$phases" "$reports"/*.xml || true; }

# The real-guest tier (docs "Clusters on an OpenStack cloud"), which CI's fake-virt lab
# cannot run: clusters on guests that boot, with the lab in its real-guest mode
# (LAB_VIRT=libvirt LAB_NET=ovs) and MAGNUM_TEST_CLOUD/MAGNUM_TEST_CLOUDS_YAML naming it.
if [ "${1:-}" = "--real-guests" ]; then
  exec python -m pytest -q -rs -m real_guests tests/test_real_guests.py
fi

echo "== style of api/, tests/ and benchmarks/ (the collection's is ansible-test's job)"
python -m pycodestyle --max-line-length 100 api osc_coe_federation tests benchmarks
python -m pyflakes api osc_coe_federation tests benchmarks

# The static checks (ansible-test sanity, ansible-lint, the collection build) need no
# service, and molecule's scenarios only Docker (the node image's build is locked, so a
# test building it at the same time waits): they run beside the tests, and their output
# follows them.
static_log=$(mktemp)
(
  set -e
  static_start=$(date +%s)
  echo "== ansible-test sanity"
  rm -rf collections/ansible_collections/openstack/magnum/tests/output
  bash .ci/sanity.sh
  echo "== ansible-lint"
  ansible-lint
  echo "== collection build and install"
  out=$(mktemp -d)
  ansible-galaxy collection build collections/ansible_collections/openstack/magnum --output-path "$out"
  ansible-galaxy collection install --force --offline --no-deps -p "$out/installed" "$out"/openstack-magnum-*.tar.gz
  test -f "$out/installed/ansible_collections/openstack/magnum/plugins/module_utils/core/store.py"
  rm -rf "$out"
  echo "static checks (beside pytest) $(($(date +%s) - static_start))" >>"$phases"
  molecule_start=$(date +%s)
  echo "== molecule (roles converged twice on real container nodes)"
  if docker info >/dev/null 2>&1 && command -v debootstrap >/dev/null; then
    for scenario in molecule/*/molecule.yml; do
      molecule test -s "$(basename "$(dirname "$scenario")")"
    done
  else
    echo "SKIPPED molecule: needs a running Docker engine and debootstrap (.ci/run sets them up)"
  fi
  echo "molecule (beside pytest) $(($(date +%s) - molecule_start))" >>"$phases"
) >"$static_log" 2>&1 &
static_pid=$!
static_done() {
  local rc=0
  wait "$static_pid" || rc=$?
  cat "$static_log"
  [ "$rc" = 0 ] || { echo "static checks failed (rc=$rc)" >&2; return 1; }
}
trap 'kill "$static_pid" 2>/dev/null || true; summary' EXIT
phase style

echo "== pytest"
# In parallel processes (pytest-xdist; most tests wait on clusters, clouds and playbooks,
# not on the CPU), each taking the next test when it is free, the longest first
# (tests/conftest.py); then, alone, the tests that measure what the whole host has left.
# MAGNUM_TEST_PROCESSES=1 runs them in one process, in order.
processes=${MAGNUM_TEST_PROCESSES:-3}
if [ "$processes" -gt 1 ]; then
  python -m pytest -q -rs -n "$processes" --dist load --maxschedchunk 1 \
    --junitxml "$reports/parallel.xml" -m "not alone" tests
  phase "pytest (parallel)"
  python -m pytest -q -rs --junitxml "$reports/alone.xml" -m alone tests
  phase "pytest (alone)"
else
  python -m pytest -q -rs --junitxml "$reports/all.xml" tests
  phase pytest
fi

static_done
phase "static checks (the rest)"
trap - EXIT
summary
echo "== all tests passed"
