#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: openstack_ssh_wait
short_description: Wait on the controller until new servers answer over SSH, all at once
version_added: 0.1.0
author: openstack.magnum contributors (@openstack)
description:
  - Runs on the controller. Asks every server of I(names) at once, again every I(sleep)
    seconds, to run C(true) over SSH as I(user) with the cluster's key, the way its
    I(routes) entry says (its floating IP, or its fixed address through a jump host), until
    each answers or I(timeout) seconds have passed. No Python is started on a server (each
    start is seconds on a slow guest) and no server waits for another to be asked first.
  - A server reached through another (its route's C(through), the first master when the
    others have no floating IP) is asked only once that one answered; one whose jump host
    never answers is reported not asked, so that it is not taken for silent itself.
  - The module does not fail when a server stays silent; its I(results) say which did and
    why (the filters C(openstack_ssh_wait_outcome) and C(openstack_ssh_wait_failure) read
    them, as they read a loop of C(ansible.builtin.wait_for_connection)).
options:
  names:
    description: The servers to wait for.
    type: list
    elements: str
    required: true
  routes:
    description:
      - How the controller reaches each server (filter C(openstack_ssh_routes)), per name
        C(host), C(args) (ssh options, Ansible's C(ansible_ssh_common_args)) and C(through)
        (the server it goes through, empty for none).
    type: dict
    required: true
  user:
    description: The user to log in as.
    type: str
    default: magnum
  key_file:
    description: The private key to log in with.
    type: path
    required: true
  timeout:
    description:
      - Seconds to wait for every server in all; with I(boot_record), the least.
    type: int
    required: true
  boot_record:
    description:
      - The cloud's record of its boots (a JSON file the module keeps; jobs share it under
        a lock). When given, the wait lasts twice the slowest boot of the cloud's last 10
        creates the record holds, at least I(timeout) and at most I(max_timeout), and the
        slowest answer of this wait's servers that answered is added to it.
    type: path
  max_timeout:
    description: The most a wait scaled by I(boot_record) lasts (0 for no limit).
    type: int
    default: 0
  sleep:
    description: Seconds between two tries at one server.
    type: int
    default: 3
  connect_timeout:
    description: Seconds one try waits for a server's connection.
    type: int
    default: 10
notes:
  - Check mode waits as well, and leaves the boot record as it is.
'''

EXAMPLES = r'''
- name: Wait for the new servers to answer over SSH
  openstack.magnum.openstack_ssh_wait:
    names: "{{ infra_openstack_new | map(attribute='name') | list }}"
    routes: "{{ infra_openstack_routes }}"
    key_file: "{{ infra_openstack_dir }}/id_ed25519"
    timeout: 300
  register: waited
'''

RETURN = r'''
results:
  description:
    - One per server of I(names), in their order, as an Ansible loop's results - C(item)
      (its name), C(failed), C(msg) (why it did not answer - the last connection error, or
      that its jump host did not), C(asked) (false when it never was), C(elapsed) (seconds
      until it answered or the wait gave up on it).
  returned: always
  type: list
  elements: dict
  sample: [{"item": "k8s-abc-master-0", "failed": false, "msg": "", "elapsed": 84}]
timeout:
  description: The bound the wait had, in seconds (I(timeout), or scaled by I(boot_record)).
  returned: always
  type: int
  sample: 300
boots:
  description: The slowest boot of each of the cloud's last creates the record held before.
  returned: always
  type: list
  elements: int
  sample: [96, 130, 104]
answered:
  description: The servers that answered, each with the seconds it took.
  returned: always
  type: dict
  sample: {"k8s-abc-master-0": 84}
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack import (
    ssh_wait)


def main():
    module = AnsibleModule(argument_spec=dict(
        names=dict(type='list', elements='str', required=True),
        routes=dict(type='dict', required=True),
        user=dict(type='str', default='magnum'),
        key_file=dict(type='path', required=True, no_log=False),
        timeout=dict(type='int', required=True),
        sleep=dict(type='int', default=3),
        connect_timeout=dict(type='int', default=10),
        boot_record=dict(type='path'),
        max_timeout=dict(type='int', default=0),
    ), supports_check_mode=True)
    params = module.params
    record = params['boot_record']
    boots = ssh_wait.recorded_boots(record) if record else []
    timeout = (ssh_wait.scaled_bound(params['timeout'], boots, params['max_timeout'])
               if record else params['timeout'])
    results = ssh_wait.wait(params['names'], params['routes'], params['user'],
                            params['key_file'], timeout, sleep=params['sleep'],
                            connect_timeout=params['connect_timeout'])
    answered = [r['elapsed'] for r in results if not r['failed']]
    if record and answered and not module.check_mode:
        ssh_wait.remember_boot(record, max(answered))
    module.exit_json(changed=False, results=results, timeout=timeout, boots=boots,
                     answered=dict((r['item'], r['elapsed']) for r in results if not r['failed']))


if __name__ == '__main__':
    main()
