#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: openstack_consoles
short_description: Tell a cluster's booting servers from its stuck ones by their consoles
version_added: 0.1.0
author: openstack.magnum contributors (@openstack)
description:
  - Reads the console log (Nova's C(os-getConsoleOutput)) of each server of I(names), again
    every I(interval) seconds for at most I(watch) seconds. A server whose console changed
    meanwhile is still booting (C(progressing)) - a slow guest, not worth a hard reboot. The
    others (C(quiet)) said nothing new the whole time.
  - The OpenStack provider asks it about the servers that stayed silent over SSH through
    the first wait, and reboots only the quiet ones.
extends_documentation_fragment:
  - openstack.magnum.store
  - openstack.magnum.cloud
options:
  names:
    description: The servers (names or ids) to watch.
    type: list
    elements: str
    required: true
  watch:
    description: Seconds to watch the consoles at most.
    type: int
    default: 60
  interval:
    description: Seconds between two reads of a console.
    type: int
    default: 10
  lines:
    description: How many of a console's last lines are compared.
    type: int
    default: 50
notes:
  - It changes nothing; check mode watches as well.
'''

EXAMPLES = r'''
- name: Which silent servers are still booting
  openstack.magnum.openstack_consoles:
    cluster: "{{ magnum_cluster.uuid }}"
    cloud: mycloud
    names: "{{ silent }}"
  register: consoles
'''

RETURN = r'''
progressing:
  description: The servers whose console changed while watched (still booting).
  returned: always
  type: list
  elements: str
quiet:
  description: The servers whose console did not change the whole time (or has none).
  returned: always
  type: list
  elements: str
last_lines:
  description: Each server's last console line, for a reason.
  returned: always
  type: dict
  sample: {"k8s-abc-master-0": "[  OK  ] Started ssh.service - OpenBSD Secure Shell server."}
'''

import time

from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack.cloud_module import (
    CloudModule)


def console(conn, server, lines):
    """The last ``lines`` lines of a server's console log ('' when it has none)."""
    if server is None:
        return ''
    try:
        got = conn.compute.get_server_console_output(server, length=lines)
    except Exception:   # pylint: disable=broad-except
        # no console (yet) is a quiet one
        return ''
    return (got or {}).get('output') or ''


class ClusterConsolesModule(CloudModule):
    argument_spec = dict(
        names=dict(type='list', elements='str', required=True),
        watch=dict(type='int', default=60),
        interval=dict(type='int', default=10),
        lines=dict(type='int', default=50),
    )

    def act(self, conn, record):
        names = list(self.params['names'])
        # each server looked up once, its console read at every interval
        servers = dict((name, conn.compute.find_server(name, ignore_missing=True))
                       for name in names)
        first = dict((name, console(conn, servers[name], self.params['lines']))
                     for name in names)
        last = dict(first)
        deadline = time.monotonic() + self.params['watch']
        waiting = list(names)
        while waiting and time.monotonic() + self.params['interval'] <= deadline:
            time.sleep(self.params['interval'])
            for name in list(waiting):
                last[name] = console(conn, servers[name], self.params['lines'])
                if last[name] != first[name]:
                    waiting.remove(name)
        self.exit_json(changed=False, progressing=[n for n in names if n not in waiting],
                       quiet=waiting, last_lines=dict(
                           (name, (last[name].strip().splitlines() or [''])[-1])
                           for name in names))


def main():
    ClusterConsolesModule()()


if __name__ == '__main__':
    main()
