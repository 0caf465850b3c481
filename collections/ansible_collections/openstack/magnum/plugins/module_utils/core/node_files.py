# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Large files the controller gives a cluster's nodes (binaries, image archives): which
ones a node lacks or has in another version (by SHA-1, as Ansible's copy compares them),
and the command that pushes them to one node with OpenSSH's scp, reaching it as Ansible
does (its inventory's address, port, user, key and SSH arguments), or with ``docker cp``
where the node is a container of this host's engine.

Ansible's copy goes one file after the other on one node after the other; these commands
run as one asynchronous job per node, every node at once."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import posixpath
import shlex

from ansible_collections.openstack.magnum.plugins.module_utils.core import node_values
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid

# Where a file is written before it is renamed over the old one (a binary in use, such
# as a running kubelet, cannot be written in place).
PART_SUFFIX = '.magnum-part'
# Where a node reached as an unprivileged user (ansible_become) is given the copies first,
# relative to that user's home.
STAGING = '.magnum-push'


# The line after which a node's checksum output lists the images its containerd holds
# (push_start.yml prints it; a node without containerd lists none).
IMAGES_MARK = '# containerd images'


def parse_sums(text):
    """``sha1sum`` output -> {path: checksum} (missing files print nothing); what follows
    IMAGES_MARK is not read."""
    sums = {}
    for line in (text or '').partition(IMAGES_MARK)[0].splitlines():
        checksum, sep, path = line.partition('  ')
        if sep and checksum and path:
            sums[path] = checksum
    return sums


def parse_images(text):
    """The image names a node's output lists after IMAGES_MARK (``ctr images ls -q``)."""
    return set((text or '').partition(IMAGES_MARK)[2].split())


def files_to_push(wanted, local_sums, node_sums):
    """The files each node lacks or has in another version. ``wanted``:
    ``[{'node', 'files': [{'src', 'dest', 'mode'}]}]`` (an image archive's entry also
    ``images``: the names it holds); ``local_sums``: ``sha1sum`` of the sources on the
    controller; ``node_sums``: the ``sha1sum`` of each node's destinations, then
    IMAGES_MARK and the images its containerd holds, looped over ``wanted`` (``item``:
    the node's entry; ``stdout``). An archive whose every image the node's containerd
    holds is not pushed (a node image that has them imported: Kubernetes' release baked
    in by the cloud_image role). Returns the entries of ``wanted`` with something to
    push, with only those files, each with ``why``: ``missing`` or ``differs``."""
    local = parse_sums(local_sums)
    remote = dict((r['item']['node'], r.get('stdout')) for r in node_sums)
    plan = []
    for entry in wanted:
        output = remote.get(entry['node'])
        have, images = parse_sums(output), parse_images(output)
        files = []
        for f in entry['files']:
            if f['src'] not in local:
                raise Invalid('%s is not on the controller (or could not be read).' % f['src'])
            if f.get('images') and set(f['images']) <= images:
                continue
            if have.get(f['dest']) != local[f['src']]:
                files.append(dict(f, why='differs' if f['dest'] in have else 'missing'))
        if files:
            plan.append({'node': entry['node'], 'files': files})
    return plan


def push_report(wanted, plan):
    """One line per node for the job's log: what it is given and why, or that it holds
    everything (``wanted`` and ``plan``: files_to_push's input and result)."""
    pushed = dict((entry['node'], entry['files']) for entry in plan)
    lines = []
    for entry in wanted:
        files = pushed.get(entry['node'], [])
        held = len(entry['files']) - len(files)
        if not files:
            lines.append('%s: holds all %d files and images it is given (its image or an '
                         'earlier run): nothing pushed' % (entry['node'], len(entry['files'])))
            continue
        why = dict((reason, [posixpath.basename(str(f['dest'])) for f in files
                             if f.get('why') == reason]) for reason in ('missing', 'differs'))
        lines.append('%s: pushing %d of %d (%s)%s' % (
            entry['node'], len(files), len(entry['files']), '; '.join(
                '%s: %s' % ('lacks' if reason == 'missing' else 'another version of', ', '.join(
                    names)) for reason, names in sorted(why.items()) if names),
            '; holds the other %d' % held if held else ''))
    return lines


def _ssh_options(host_vars):
    """What ssh and scp are both given for a node (its key, its common SSH arguments);
    never a prompt."""
    opts = ['-o', 'BatchMode=yes']
    key = host_vars.get('ansible_ssh_private_key_file') or host_vars.get(
        'ansible_private_key_file')
    if key:
        opts += ['-i', str(key)]
    return opts + shlex.split(str(host_vars.get('ansible_ssh_common_args') or ''))


def push_command(host_vars, files):
    """The argv of a controller command that writes ``files`` ({src, dest, mode}) to the
    node reached through ``host_vars`` (its Ansible inventory variables: ansible_host,
    ansible_port, ansible_user, ansible_ssh_private_key_file, ansible_ssh_common_args,
    ansible_ssh_extra_args, ansible_scp_extra_args, ansible_become): the destinations'
    directories made, each file copied beside its destination (through the user's home
    and sudo where the user is not root and becomes it), then all given their mode and
    renamed over the old ones together."""
    if not files:
        raise Invalid('push_command: no files to push to %s.' % (
            host_vars.get('ansible_host') or host_vars.get('inventory_hostname')))
    if host_vars.get('magnum_node_container'):
        return _container_push(str(host_vars['magnum_node_container']), files)
    host = str(host_vars.get('ansible_host') or host_vars.get('inventory_hostname') or '')
    if not host:
        raise Invalid('push_command: the node has no address (ansible_host).')
    user = host_vars.get('ansible_user')
    port = str(host_vars.get('ansible_port') or 22)
    target = ('%s@' % user if user else '') + host
    scp_target = ('%s@' % user if user else '') + node_values.bracketed(host)
    common = _ssh_options(host_vars)
    ssh = ['ssh'] + common + ['-p', port] + shlex.split(
        str(host_vars.get('ansible_ssh_extra_args') or ''))
    scp = ['scp', '-q'] + common + ['-P', port] + shlex.split(
        str(host_vars.get('ansible_scp_extra_args') or ''))
    if _truthy(host_vars.get('ansible_become')) and user not in (None, '', 'root'):
        return _script(_staged_push(ssh + [target], scp, scp_target, files))
    dirs, moves = _layout(files)
    steps = [ssh + [target, 'mkdir -p ' + ' '.join(shlex.quote(d) for d in dirs)]]
    steps += [scp + [str(f['src']), '%s:%s' % (scp_target, str(f['dest']) + PART_SUFFIX)]
              for f in files]
    steps.append(ssh + [target, moves])
    return _script(steps)


def _truthy(value):
    return value is True or str(value).strip().lower() in ('true', 'yes', '1', 'on')


def _staged_push(ssh, scp, scp_target, files):
    """The steps for a node reached as an unprivileged user who becomes root with sudo
    (a cloud image's default user, ``ansible_become``): the files are copied into
    STAGING in that user's home, then one ``sudo -n`` makes the directories and moves
    each copy, owned by root, beside its destination and renames it over the old file."""
    dirs, moves = _layout(files)
    staged = ['%s/%d%s' % (STAGING, n, PART_SUFFIX) for n in range(len(files))]
    steps = [ssh + ['mkdir -p ' + STAGING]]
    steps += [scp + [str(f['src']), '%s:%s' % (scp_target, part)]
              for f, part in zip(files, staged)]
    placed = ' && '.join('chown 0:0 %s && mv -f %s %s' % (
        shlex.quote(part), shlex.quote(part), shlex.quote(str(f['dest']) + PART_SUFFIX))
        for f, part in zip(files, staged))
    root = 'mkdir -p %s && %s && %s' % (' '.join(shlex.quote(d) for d in dirs), placed, moves)
    steps.append(ssh + ['sudo -n sh -c ' + shlex.quote(root)])
    return steps


def _container_push(container, files):
    """The same for a node that is a container of this host's Docker engine (the local
    provider's, inventory variable ``magnum_node_container``): ``docker cp``, no SSH
    encryption (a third of a Kubernetes create's push time on two cores)."""
    dirs, moves = _layout(files)
    steps = [['docker', 'exec', container, 'mkdir', '-p'] + dirs]
    steps += [['docker', 'cp', str(f['src']), '%s:%s' % (container, str(f['dest']) + PART_SUFFIX)]
              for f in files]
    steps.append(['docker', 'exec', container, 'sh', '-c', moves])
    return _script(steps, quiet=True)


def _layout(files):
    """The destinations' directories, and the shell command that gives the copies their
    mode and renames them over the old files, all together."""
    dirs, moves = [], []
    for f in files:
        dest = str(f['dest'])
        if not posixpath.isabs(dest):
            raise Invalid('push_command: %s is not an absolute path.' % dest)
        if posixpath.dirname(dest) not in dirs:
            dirs.append(posixpath.dirname(dest))
        part = dest + PART_SUFFIX
        moves.append('chmod %s %s && mv -f %s %s' % (
            shlex.quote(str(f.get('mode') or '0644')), shlex.quote(part), shlex.quote(part),
            shlex.quote(dest)))
    return dirs, ' && '.join(moves)


def _script(steps, quiet=False):
    """One /bin/sh command running ``steps`` in order, stopping at the first failure
    (``quiet``: each step's standard output discarded)."""
    tail = ' >/dev/null' if quiet else ''
    return ['/bin/sh', '-c', ' && '.join(
        ' '.join(shlex.quote(arg) for arg in step) + tail for step in steps)]
