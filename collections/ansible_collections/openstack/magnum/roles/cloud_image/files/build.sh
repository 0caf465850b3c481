#!/usr/bin/env bash
# Build a Debian guest image without loop or nbd devices: debootstrap -> the guest's
# settings -> an ext4 filesystem image (mkfs.ext4 -d, no partition table) -> qcow2, with
# the kernel and initrd beside it (Glance aki/ari images: the cloud boots it by direct
# kernel boot). cloud-init (config drive first, then the OpenStack metadata service) gives
# the default user the keys; sshd, Docker and containerd start at boot.
# Usage: build.sh DIR SUITE MIRROR PACKAGES USER SIZE [BASE BAKE...]
# (DIR/root is kept between builds). BASE: a built image's directory whose root
# filesystem this one starts from instead of debootstrap (a release image: the base image
# plus a Kubernetes release); BAKE...: a command run with the root filesystem as its last
# argument before the filesystem is made.
set -euo pipefail
dir=$1 suite=$2 mirror=$3 packages=$4 user=$5 size=$6
shift 6
base=${1:-}
[ $# -gt 0 ] && shift
root=$dir/root
[ -f "$dir/disk.qcow2" ] && exit 0   # built by another run while this one waited
mkdir -p "$dir"
if [ -n "$base" ] && [ ! -f "$dir/baked" ]; then
  rm -rf "$root"
  cp -a "$base/root" "$root"
  "$@" "$root" >"$dir/bake.log" 2>&1 || { tail -20 "$dir/bake.log" >&2; exit 1; }
  touch "$dir/baked"
elif [ ! -x "$root/usr/bin/cloud-init" ]; then
  rm -rf "$root"
  debootstrap --variant=minbase --include="$packages" "$suite" "$root" "$mirror" \
    >"$dir/debootstrap.log" 2>&1 || { tail -20 "$dir/debootstrap.log" >&2; exit 1; }
fi
printf 'LABEL=root / ext4 defaults,noatime,errors=remount-ro 0 1\n' >"$root/etc/fstab"
echo magnum-node >"$root/etc/hostname"
printf 'auto lo\niface lo inet loopback\nsource /etc/network/interfaces.d/*\n' \
  >"$root/etc/network/interfaces"
mkdir -p "$root/etc/network/interfaces.d" "$root/etc/cloud/cloud.cfg.d"
cat >"$root/etc/cloud/cloud.cfg.d/90-magnum.cfg" <<CFG
datasource_list: [ ConfigDrive, OpenStack, None ]
system_info:
  default_user:
    name: $user
    sudo: ALL=(ALL) NOPASSWD:ALL
    shell: /bin/bash
    lock_passwd: true
ssh_genkeytypes: [ ed25519 ]
ssh_deletekeys: true
# guests may reach no DNS server: the hostname resolves locally (sudo waits otherwise)
manage_etc_hosts: true
cloud_init_modules: [ migrator, seed_random, bootcmd, write-files, growpart, resizefs, mounts,
  set_hostname, update_hostname, update_etc_hosts, users-groups, ssh ]
cloud_config_modules: [ set-passwords, timezone, runcmd ]
cloud_final_modules: [ write-files-deferred, scripts-vendor, scripts-per-once, scripts-per-boot,
  scripts-per-instance, scripts-user, ssh-authkey-fingerprints, keys-to-console, final-message ]
CFG
rm -f "$root"/etc/ssh/ssh_host_*
mkdir -p "$root/etc/systemd/system/ssh.service.d"
# Host keys before Debian's own "sshd -t" check (a drop-in's ExecStartPre would run after
# it, and it fails without keys): a guest whose cloud-init does not run still has sshd.
printf '[Service]\nExecStartPre=\nExecStartPre=-/bin/sh -c "ls /etc/ssh/ssh_host_*_key >/dev/null 2>&1 || ssh-keygen -A"\nExecStartPre=/usr/sbin/sshd -t\n' \
  >"$root/etc/systemd/system/ssh.service.d/magnum-hostkeys.conf"
# ZooKeeper runs on a Mesos cluster's masters only: the mesos role starts it there.
chroot "$root" systemctl disable zookeeper >/dev/null 2>&1 || true
chroot "$root" systemctl mask apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer \
  e2scrub_reap.service fstrim.timer man-db.timer >/dev/null 2>&1 || true
chroot "$root" apt-get clean
rm -rf "$root"/var/lib/apt/lists/* "$root"/usr/share/doc/* "$root"/usr/share/man/*
kernel=$(ls "$root/lib/modules" | sort -V | tail -1)
cp "$root/boot/vmlinuz-$kernel" "$dir/vmlinuz"
cp "$root/boot/initrd.img-$kernel" "$dir/initrd.img"
rm -f "$dir/root.ext4" "$dir/disk.qcow2"
truncate -s "$size" "$dir/root.ext4"
mkfs.ext4 -q -L root -d "$root" "$dir/root.ext4"
qemu-img convert -O qcow2 "$dir/root.ext4" "$dir/disk.qcow2"
rm -f "$dir/root.ext4"
