#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: capi_components
short_description: Make a Cluster API provider's components ready to apply, as clusterctl does, without cert-manager
version_added: 0.1.0
author: openstack.magnum contributors (@openstack)
description:
  - Runs on the controller. Reads a Cluster API provider's components (the YAML its release
    publishes, such as C(core-components.yaml) or C(infrastructure-components.yaml), or its
    C(config/default) rendered by kustomize), gives clusterctl's variables
    (C(${NAME}), C(${NAME:=default})) their values, takes its images from where the operator
    keeps them, and replaces cert-manager - a CA per provider, a serving certificate for
    each of the components' cert-manager C(Certificate)s written into the Secret it names,
    that CA injected as the C(caBundle) of every webhook configuration and conversion
    webhook that asks for it. cert-manager's own objects are left out.
  - The components are parsed before anything is substituted; a variable's value lands in
    one string of a document, never in YAML text.
  - Writes the documents ready to apply to I(dest) and the certificates it issued to
    I(state) (both mode 0600, for they hold the serving keys); a later run keeps those
    certificates while they still serve the same DNS names, so it changes nothing.
options:
  src:
    description: The provider's components, a file of YAML documents.
    type: path
    required: true
  dest:
    description: Where the documents ready to apply are written (YAML, mode 0600).
    type: path
    required: true
  state:
    description: Where the issued certificates are kept between runs (JSON, mode 0600).
    type: path
    required: true
  variables:
    description:
      - clusterctl's variables, name to value (one-line strings); those not given take
        their defaults, and one with no default must be given.
    type: dict
    default: {}
  images:
    description:
      - Images by name (the last part of the reference without its tag,
        C(cluster-api-controller)) to the reference to run instead.
    type: dict
    default: {}
  repository:
    description:
      - A registry and path every other image is taken from (its name and tag kept), as
        clusterctl's C(images.all.repository).
    type: str
    default: ''
notes:
  - Check mode writes nothing and says whether a run would change I(dest).
'''

EXAMPLES = r'''
- name: Make Cluster API's core ready to apply
  openstack.magnum.capi_components:
    src: /srv/capi/core-components.yaml
    dest: /var/lib/magnum/capi/core.yaml
    state: /var/lib/magnum/capi/core-certificates.json
    repository: registry.example.org:5000/capi
    variables:
      EXP_MACHINE_POOL: "true"
'''

RETURN = r'''
documents:
  description: How many documents I(dest) holds.
  returned: always
  type: int
  sample: 25
certificates:
  description: The cert-manager Certificates replaced (namespace/name).
  returned: always
  type: list
  elements: str
  sample: [capi-system/capi-serving-cert]
deployments:
  description: The components' Deployments (the controllers to wait for), C(namespace) and C(name) each.
  returned: always
  type: list
  elements: dict
  sample: [{"namespace": "capi-system", "name": "capi-controller-manager"}]
images:
  description: The images the components run.
  returned: always
  type: list
  elements: str
  sample: [registry.example.org:5000/capi/cluster-api-controller:v1.11.0]
'''

import json

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

try:
    import yaml
    HAS_YAML = True
except ImportError:  # pragma: no cover
    HAS_YAML = False

from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid
from ansible_collections.openstack.magnum.plugins.module_utils.core.private_files import (
    replace_if_changed)
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.capi import components


def _read_state(path):
    try:
        with open(path) as handle:
            return json.load(handle)
    except (IOError, OSError, ValueError):
        return {}


def main():
    module = AnsibleModule(argument_spec=dict(
        src=dict(type='path', required=True),
        dest=dict(type='path', required=True),
        state=dict(type='path', required=True),
        variables=dict(type='dict', default={}),
        images=dict(type='dict', default={}),
        repository=dict(type='str', default=''),
    ), supports_check_mode=True)
    if not HAS_YAML:
        module.fail_json(msg=missing_required_lib('PyYAML'))
    params = module.params
    try:
        with open(params['src']) as handle:
            docs = list(yaml.safe_load_all(handle))
    except (IOError, OSError) as exc:
        module.fail_json(msg='Cannot read the components %s: %s' % (params['src'], exc))
    except yaml.YAMLError as exc:
        module.fail_json(msg='The components %s are not YAML: %s' % (params['src'], exc))
    try:
        ready, issued = components.prepare(docs, params['variables'], params['images'],
                                           params['repository'], _read_state(params['state']))
    except Invalid as exc:
        module.fail_json(msg='%s: %s' % (params['src'], exc))
    changed = replace_if_changed(params['dest'], yaml.safe_dump_all(ready, sort_keys=False),
                                 module.check_mode)
    changed = replace_if_changed(params['state'], json.dumps(issued, sort_keys=True),
                                 module.check_mode) or changed
    deployments = [{'namespace': d['metadata'].get('namespace', ''), 'name': d['metadata']['name']}
                   for d in ready if d.get('kind') == 'Deployment']
    module.exit_json(changed=changed, documents=len(ready), certificates=sorted(issued),
                     deployments=deployments,
                     images=sorted(set(c['image'] for d in ready
                                       for c in components.containers(d) if c.get('image'))))


if __name__ == '__main__':
    main()
