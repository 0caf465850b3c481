#!/bin/sh
# Entry point of a cluster node container: make /sys and the cgroup hierarchies
# writable for systemd and the nested container engine, make mounts shared,
# give sshd host keys, then hand over to systemd.
set -e
mount -o remount,bind,rw /sys 2>/dev/null || true
for dir in /sys/fs/cgroup/*/; do
  mount -o remount,bind,rw "$dir" 2>/dev/null || true
done
mount --make-rshared / 2>/dev/null || true
[ -f /etc/ssh/ssh_host_ed25519_key ] || ssh-keygen -A >/dev/null
exec /sbin/init "$@"
