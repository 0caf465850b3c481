# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A Kubernetes node made ready for kubeadm, in one run on the node (module
``k8s_node_setup``), every node at once.

The files are those of the ``k8s_config`` generators and the units below; each step
writes only what differs and says what it changed. systemd is reloaded once, at the
end, and only when a unit changed (a reload is seconds on a loaded node, and the Docker
engine's ``systemctl disable`` made one more per node).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import hashlib
import os
import shutil
import stat
import threading

from ansible_collections.openstack.magnum.plugins.module_utils.core import node_steps, node_values
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.kubeadm import k8s_config

SYSTEMD_DIR = '/etc/systemd/system'
UNIT_DIRS = ('/etc/systemd/system', '/lib/systemd/system', '/usr/lib/systemd/system')
KUBELET_UNIT = SYSTEMD_DIR + '/kubelet.service'
KUBEADM_DROPIN = SYSTEMD_DIR + '/kubelet.service.d/10-kubeadm.conf'
CONTAINERD_UNIT = SYSTEMD_DIR + '/containerd.service'
CONTAINERD_PROXY = SYSTEMD_DIR + '/containerd.service.d/http-proxy.conf'
CONTAINERD_CONFIG = '/etc/containerd/config.toml'
SYSCTL_FILE = '/etc/sysctl.d/90-kubernetes.conf'
SYSCTL = ('net.ipv4.ip_forward = 1\n'
          'net.bridge.bridge-nf-call-iptables = 1\n'
          'net.bridge.bridge-nf-call-ip6tables = 1\n')
# The kernel modules kubeadm's preflight and the bridge settings need, loaded at boot (a
# release image's; a node of a cluster has them from its Docker engine or its host).
MODULES_FILE = '/etc/modules-load.d/openstack-magnum-kubernetes.conf'
MODULES = 'overlay\nbr_netfilter\n'
# What a release image does not start: a node image's Docker engine (its docker0 takes
# 172.17.0.0/16, inside Cluster API's default pod network 172.16.0.0/13).
IMAGE_DISABLED = ('docker.service', 'docker.socket')
TUN_FILE = '/etc/tmpfiles.d/openstack-magnum-tun.conf'
TUN = 'c /dev/net/tun 0666 - - - 10:200\n'
CNI_SOURCE, CNI_DIR = '/usr/lib/cni', '/opt/cni/bin'
NODE_RESOLV = ('/run/systemd/resolve/resolv.conf', '/etc/resolv.conf')
KUBEADM_DIRS = ('/etc/kubernetes', '/etc/kubernetes/manifests')
# Image archives imported into containerd at once (the control plane's are the slowest
# node's: one at a time left a core idle while each archive was read).
IMPORTS_AT_ONCE = 3
MANAGED = '# openstack.magnum: do not edit, the kubernetes role rewrites it\n'


def kubelet_unit(bin_dir):
    """The kubelet's unit (the one upstream's packages install)."""
    return MANAGED + '\n'.join([
        '[Unit]',
        'Description=kubelet: the Kubernetes node agent',
        'Wants=network-online.target containerd.service',
        'After=network-online.target containerd.service',
        '',
        '[Service]',
        'ExecStart=%s/kubelet' % bin_dir,
        'Restart=always',
        'RestartSec=2',
        'StartLimitInterval=0',
        '',
        '[Install]',
        'WantedBy=multi-user.target',
        ''])


def kubeadm_dropin(bin_dir):
    """kubeadm's drop-in for the kubelet (the flags and files kubeadm writes)."""
    return MANAGED + '\n'.join([
        '[Service]',
        'Environment="KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=/etc/kubernetes/'
        'bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf"',
        'Environment="KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml"',
        'EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env',
        'ExecStart=',
        'ExecStart=%s/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS '
        '$KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS' % bin_dir,
        ''])


def containerd_unit(source):
    """The unit of containerd unpacked from its release tarball (``k8s_containerd_source``
    of mode tarball), as containerd's own containerd.service."""
    return MANAGED + '# containerd %s from its release tarball\n' % source['version'] + \
        '\n'.join([
            '[Unit]',
            'Description=containerd container runtime',
            'Documentation=https://containerd.io',
            'After=network.target local-fs.target',
            '',
            '[Service]',
            'ExecStartPre=-/sbin/modprobe overlay',
            'ExecStart=%s/bin/containerd' % source['prefix'],
            'Type=notify',
            'Delegate=yes',
            'KillMode=process',
            'Restart=always',
            'RestartSec=5',
            'LimitNPROC=infinity',
            'LimitCORE=infinity',
            'LimitNOFILE=infinity',
            'TasksMax=infinity',
            'OOMScoreAdjust=-999',
            '',
            '[Install]',
            'WantedBy=multi-user.target',
            ''])


def image_plan(conf, bin_dir, containerd=None):
    """What a release image holds, beside its binaries and images, for a server booted from
    it to be ready for ``kubeadm init`` / ``join`` with nothing done on it - as Cluster
    API's image-builder leaves its images, for CAPI's bootstrap runs kubeadm from
    cloud-init: the files NodeSetup writes on every node (the kubelet's unit and kubeadm's
    drop-in, the kernel settings, containerd's configuration for ``conf``) and the modules
    they need at boot; with ``containerd`` (``k8s_containerd_source``) of mode tarball, its
    release unpacked in ``prefix`` with its unit and runc; the CNI plugins where containerd
    looks; the kubelet and containerd enabled, the Docker engine not. The role's bake
    (roles/cloud_image files/bake_kubernetes.py --plan) carries it out; paths of
    ``unpack`` and ``copies`` sources are the controller's."""
    files = {KUBELET_UNIT: kubelet_unit(bin_dir), KUBEADM_DROPIN: kubeadm_dropin(bin_dir),
             SYSCTL_FILE: SYSCTL, MODULES_FILE: MODULES}
    plan = {'unpack': [], 'copies': [], 'trees': [{'src': CNI_SOURCE, 'dest': CNI_DIR}],
            'enable': ['kubelet.service', 'containerd.service'],
            'disable': list(IMAGE_DISABLED)}
    if (containerd or {}).get('mode') == 'tarball':
        conf = dict(conf, runc_binary=containerd['runc_binary'])
        files[CONTAINERD_UNIT] = containerd_unit(containerd)
        plan['unpack'].append({'src': containerd['tarball'], 'dest': containerd['prefix']})
        plan['copies'].append({'src': containerd['runc'], 'dest': containerd['runc_binary'],
                               'mode': '0755'})
    files[CONTAINERD_CONFIG] = k8s_config.containerd_config(conf)
    plan['files'] = [{'dest': dest, 'content': text, 'mode': '0644'}
                     for dest, text in sorted(files.items())]
    return plan


def proxy_dropin(proxy):
    """containerd's drop-in with the template's proxies (for image pulls); an empty
    [Service] section without any, so that proxies a template no longer has go too."""
    return '[Service]\n' + node_values.systemd_environment(proxy or {})


def archives_to_import(images, have):
    """The archives of ``images`` (``[{'archive', 'names', 'fresh'}]``, k8s_node_images)
    to import into a containerd that has the images ``have``: those pushed in this run,
    and those holding an image it lacks (a run that pushed them, then stopped)."""
    have = set(have)
    return [i['archive'] for i in images
            if i.get('fresh') or not set(i.get('names') or []) <= have]


class NodeSetup(node_steps.NodeSteps):
    """The steps, in order (the primitives: node_steps.NodeSteps)."""

    # -- the steps
    def stop_docker_engine(self):
        """A node image with a Docker engine (the docker provider's serves Swarm too): the
        kubelet uses containerd, and the engine's docker0 would take 172.17.0.0/16 from
        the node's routes. Stopped, disabled without a reload, its bridge removed."""
        if not any(os.path.exists(d + '/docker.service') for d in UNIT_DIRS):
            return
        enabled = self._run(['systemctl', 'is-enabled', '--quiet', 'docker.service'])[0] == 0
        active = self._run(['systemctl', 'is-active', '--quiet', 'docker.service'])[0] == 0
        bridge = os.path.exists('/sys/class/net/docker0')
        if not (enabled or active or bridge):
            return
        self.changed('stopped the Docker engine')
        if self.check_mode:
            return
        units = ['docker.socket', 'docker.service']
        self.command(['systemctl', 'stop'] + units, 'Stopping the Docker engine', check=False)
        self.command(['systemctl', '--no-reload', 'disable'] + units,
                     'Disabling the Docker engine', check=False)
        if self._run(['systemctl', 'is-active', '--quiet', 'docker.service'])[0] == 0:
            raise node_steps.StepFailed(
                'Stopping the Docker engine: docker.service is still active')
        if os.path.exists('/sys/class/net/docker0'):
            self.command(['ip', 'link', 'delete', 'docker0'], 'Removing the docker0 bridge')

    def kubeadm_dirs(self):
        for path in KUBEADM_DIRS:
            self.directory(path)

    def resolv(self, conf, controller_text):
        """What pods of dnsPolicy Default (CoreDNS) resolve with (k8s_config.resolv_conf)."""
        node_text = ''
        for path in NODE_RESOLV:
            if os.path.exists(path):
                with open(path) as f:
                    node_text = f.read()
                break
        self.file(conf['resolv_conf'], k8s_config.resolv_conf(conf, node_text, controller_text))

    def kernel(self):
        if self.file(SYSCTL_FILE, SYSCTL) and not self.check_mode:
            self.command(['sysctl', '--system'], 'Applying the kernel settings')

    def tun(self, conf):
        """flannel's udp backend sends pod traffic through a TUN device: made at every
        boot (a VM's /dev has it; a container node's has not) and now."""
        if conf.get('network_driver') != 'flannel' or conf.get('flannel_backend') != 'udp':
            return
        self.file(TUN_FILE, TUN)
        if self.check_mode or _is_char('/dev/net/tun'):
            return
        self.command(['systemd-tmpfiles', '--create', TUN_FILE], 'Making /dev/net/tun',
                     check=False)
        if not _is_char('/dev/net/tun'):
            raise node_steps.StepFailed(
                "no /dev/net/tun: the node cannot run flannel's udp backend")
        self.changed('made /dev/net/tun')

    def registries(self, conf):
        """The registries' hosts.toml (and CA) the cluster needs (k8s_config.registry_hosts);
        those this driver wrote for a registry it no longer needs are removed."""
        top, wanted = conf['registry_hosts_dir'], k8s_config.registry_hosts(conf)
        for name in sorted(os.listdir(top)) if os.path.isdir(top) else []:
            hosts = os.path.join(top, name, 'hosts.toml')
            if name in wanted or not os.path.isfile(hosts):
                continue
            with open(hosts) as f:
                ours = f.readline().rstrip('\n') in k8s_config.REGISTRY_HOSTS_MARKS
            if ours:
                self.changed('removed the registry ' + name)
                if not self.check_mode:
                    shutil.rmtree(os.path.join(top, name))
        for name, files in sorted(wanted.items()):
            for file_name, text in sorted(files.items()):
                self.file(os.path.join(top, name, file_name), text)

    def keystone_webhook(self, conf, master):
        """A master's kubeconfig for the API server's Keystone webhook (keystone_auth)."""
        if master and conf.get('keystone_auth'):
            self.file(k8s_config.KEYSTONE_WEBHOOK_CONFIG, k8s_config.keystone_webhook_kubeconfig(),
                      mode=0o600)
            if conf.get('keystone_authz_api'):
                self.file(k8s_config.KEYSTONE_AUTHZ_CONFIG,
                          k8s_config.keystone_authorization_config(conf), mode=0o600)

    def kubelet(self, bin_dir):
        unit = self.file(KUBELET_UNIT, kubelet_unit(bin_dir))
        dropin = self.file(KUBEADM_DROPIN, kubeadm_dropin(bin_dir))
        if (unit or dropin) and not self.check_mode:
            # kubeadm starts it with its configuration; enabled now, loaded at the reload.
            self.command(['systemctl', '--no-reload', 'enable', 'kubelet.service'],
                         'Enabling the kubelet')
            self.reload = True

    def cni_plugins(self):
        """The CNI reference plugins (Debian's) where containerd and flannel look."""
        if os.path.exists(os.path.join(CNI_DIR, 'bridge')) or not os.path.isdir(CNI_SOURCE):
            return
        self.changed('copied the CNI plugins to ' + CNI_DIR)
        if self.check_mode:
            return
        self.directory(CNI_DIR)
        for name in sorted(os.listdir(CNI_SOURCE)):
            target = os.path.join(CNI_DIR, name)
            if not os.path.exists(target):
                shutil.copy2(os.path.join(CNI_SOURCE, name), target)

    def containerd(self, conf, source, tarball, cache):
        """containerd configured for kubeadm (k8s_config.containerd_config) with the
        template's proxies; from its release tarball where the source says so (unpacked
        where the node has not this one yet, with a unit of its own and the release's
        runc). Restarted where anything changed. Returns whether it was."""
        changed = False
        tarball_mode = (source or {}).get('mode') == 'tarball'
        if tarball_mode:
            changed = self.unpack(source, tarball, cache)
            if self.file(CONTAINERD_UNIT, containerd_unit(source)):
                changed = self.reload = True
            conf = dict(conf, runc_binary=source['runc_binary'])
        changed = self.file(CONTAINERD_CONFIG, k8s_config.containerd_config(conf)) or changed
        if self.file(CONTAINERD_PROXY, proxy_dropin(conf.get('proxy'))):
            changed = self.reload = True
        if changed and not self.check_mode:
            self.command(['systemctl', '--no-reload', 'enable', 'containerd.service'],
                         'Enabling containerd')
        return changed

    def unpack(self, source, tarball, cache):
        marker = os.path.join(cache, 'unpacked')
        digest = _sha256(tarball)
        try:
            with open(marker) as f:
                if f.read().strip() == digest:
                    return False
        except (IOError, OSError):
            pass
        self.changed('unpacked containerd %s' % source['version'])
        if not self.check_mode:
            self.directory(source['prefix'])
            self.command(['tar', '-C', source['prefix'], '-xzf', tarball],
                         'Unpacking containerd')
            self.file(marker, digest + '\n')
        return True

    def restart(self, containerd_changed):
        if self.check_mode:
            return
        if self.reload:
            self.command(['systemctl', 'daemon-reload'], 'Reloading systemd')
        if containerd_changed:
            self.command(['systemctl', 'restart', 'containerd.service'], 'Restarting containerd')

    def images(self, images):
        """The image archives containerd lacks or that were pushed now, imported into its
        k8s.io namespace (archives_to_import). Returns those imported."""
        if not images:
            return []
        out = self.command(['ctr', '--namespace', 'k8s.io', 'images', 'ls', '--quiet'],
                           'Listing the images containerd has')[1]
        todo = archives_to_import(images, out.split())
        for archive in todo:
            self.changed('imported ' + os.path.basename(archive))
        if not self.check_mode:
            self.each([(['ctr', '--namespace', 'k8s.io', 'images', 'import', archive],
                        'Importing ' + archive + ' into containerd') for archive in todo])
        return todo

    def each(self, commands, at_once=IMPORTS_AT_ONCE):
        """Run ``commands`` ((argv, what) pairs), ``at_once`` at a time; raise the first
        failure (in order) once all have ended."""
        pending, errors, lock = list(enumerate(commands)), {}, threading.Lock()

        def work():
            while True:
                with lock:
                    if not pending:
                        return
                    index, (argv, what) = pending.pop(0)
                try:
                    self.command(argv, what)
                except node_steps.StepFailed as exc:
                    errors[index] = exc
        threads = [threading.Thread(target=work) for dummy in range(min(at_once, len(commands)))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            raise errors[min(errors)]

    def all(self, params):
        conf = params['conf']
        self.stop_docker_engine()
        self.kubeadm_dirs()
        self.resolv(conf, params.get('controller_resolv') or '')
        self.kernel()
        self.tun(conf)
        self.registries(conf)
        self.keystone_webhook(conf, params.get('master'))
        self.kubelet(params['bin_dir'])
        self.cni_plugins()
        restart = self.containerd(conf, params.get('containerd'),
                                  params.get('containerd_tarball'),
                                  params.get('containerd_cache'))
        self.restart(restart)
        return self.images(params.get('images'))


def _is_char(path):
    try:
        return stat.S_ISCHR(os.stat(path).st_mode)
    except OSError:
        return False


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, 'rb') as f:
        for block in iter(lambda: f.read(1 << 20), b''):
            digest.update(block)
    return digest.hexdigest()
