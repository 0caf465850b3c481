# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The cloud-config the OpenStack cloud controller manager and Cinder CSI read
(``cloud.conf``, gcfg's INI), written from the job's cloud as openstacksdk loads it:
its credential (the cluster's application credential where the API made one, else the
provider's cloud), region and TLS settings in [Global]; the cluster's external network,
subnet and Octavia labels in [LoadBalancer]."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import json

from ansible_collections.openstack.magnum.plugins.module_utils.core import labels as labels_mod
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid

# openstacksdk's auth keys -> the cloud-config's [Global] keys (gophercloud's names).
GLOBAL_KEYS = (
    ('auth_url', 'auth-url'),
    ('application_credential_id', 'application-credential-id'),
    ('application_credential_name', 'application-credential-name'),
    ('application_credential_secret', 'application-credential-secret'),
    ('username', 'username'),
    ('user_id', 'user-id'),
    ('password', 'password'),
    ('user_domain_name', 'user-domain-name'),
    ('user_domain_id', 'user-domain-id'),
    ('project_id', 'tenant-id'),
    ('project_name', 'tenant-name'),
    ('project_domain_name', 'tenant-domain-name'),
    ('project_domain_id', 'tenant-domain-id'),
    ('domain_name', 'domain-name'),
    ('domain_id', 'domain-id'),
    ('trust_id', 'trust-id'),
)
# The auth types a cluster can keep using: a token expires, a cluster lives on.
AUTH_TYPES = ('password', 'v3password', 'v3applicationcredential', 'applicationcredential')


def global_section(auth_type, auth, region=None, verify=True, cacert=None, interface=None):
    """[Global] from a cloud's ``auth_type`` and ``auth`` (openstacksdk's dicts)."""
    if (auth_type or 'password') not in AUTH_TYPES:
        raise Invalid("cloud_provider_enabled: the cloud's auth type %s cannot be given to a "
                      "cluster (it expires or needs the caller); use a password or an "
                      "application credential." % auth_type)
    if cacert:
        raise Invalid("cloud_provider_enabled: the cloud names a CA file (cacert), which "
                      "the cluster's controllers cannot be given yet; use a publicly "
                      "trusted endpoint or verify: false.")
    section = [(key, auth[name]) for name, key in GLOBAL_KEYS if auth.get(name)]
    if not any(entry[0] == 'auth-url' for entry in section):
        raise Invalid("cloud_provider_enabled: the cloud has no auth_url.")
    if region:
        section.append(('region', region))
    if interface:
        section.append(('os-endpoint-type', interface))
    if verify is False:
        section.append(('tls-insecure', 'true'))
    return section


# openstacksdk's auth keys a clouds.yaml handed to a cluster may carry.
CLOUDS_YAML_AUTH = tuple(name for name, _key in GLOBAL_KEYS)


def clouds_yaml(auth_type, auth, region=None, verify=True, cacert=None, interface=None,
                cloud_name='openstack'):
    """A clouds.yaml (JSON, which is YAML) of one cloud, ``cloud_name``, with the
    credential of a cloud as openstacksdk loads it: what Cluster API's OpenStack provider
    reads from the cluster's credentials Secret."""
    if (auth_type or 'password') not in AUTH_TYPES:
        raise Invalid("The cloud's auth type %s cannot be given to a cluster (it expires or "
                      "needs the caller); use a password or an application credential."
                      % auth_type)
    if cacert:
        raise Invalid("The cloud names a CA file (cacert), which cannot be given to a "
                      "cluster yet; use a publicly trusted endpoint or verify: false.")
    if not (auth or {}).get('auth_url'):
        raise Invalid("The cloud has no auth_url.")
    cloud = {'auth': dict((k, auth[k]) for k in CLOUDS_YAML_AUTH if auth.get(k)),
             'auth_type': 'v3applicationcredential' if 'application' in (auth_type or '')
             else 'password', 'identity_api_version': 3}
    if region:
        cloud['region_name'] = region
    if interface:
        cloud['interface'] = interface
    if verify is False:
        cloud['verify'] = False
    return json.dumps({'clouds': {cloud_name: cloud}}, indent=2, sort_keys=True)


def load_balancer_section(labels, floating_network_id=None, subnet_id=None,
                          network_id=None, octavia=True):
    """[LoadBalancer]: where Services of type LoadBalancer get their floating IP and
    members, and the guide's Octavia labels (octavia_provider, octavia_lb_algorithm,
    octavia_lb_healthcheck). A cloud without Octavia (``octavia`` false: no load-balancer
    endpoint in its catalog) gets the controller turned off - the cloud controller
    manager stops at its start when it cannot find one, and then initialises no node."""
    labels = labels or {}
    if not octavia:
        return [('enabled', 'false')]
    section = []
    for key, value in (('floating-network-id', floating_network_id),
                       ('subnet-id', subnet_id), ('network-id', network_id),
                       ('lb-provider', labels.get('octavia_provider'))):
        if value:
            section.append((key, value))
    if labels.get('octavia_lb_algorithm'):
        labels_mod.validate({'octavia_lb_algorithm': labels['octavia_lb_algorithm']})
        section.append(('lb-method', labels['octavia_lb_algorithm']))
    section.append(('create-monitor', 'true' if labels_mod.to_bool(
        labels.get('octavia_lb_healthcheck'), True) else 'false'))
    return section


def _quote(key, value):
    text = str(value)
    if '\n' in text or '\r' in text:
        raise Invalid("The cloud-config's %s cannot hold a line break." % key)
    return '"%s"' % text.replace('\\', '\\\\').replace('"', '\\"')


def render(sections):
    """``sections`` (name -> list of (key, value)) as gcfg text, every value quoted."""
    lines = []
    for name, entries in sections:
        lines.append('[%s]' % name)
        lines.extend('%s = %s' % (key, _quote(key, value)) for key, value in entries)
        lines.append('')
    return '\n'.join(lines)


def helm_values(values, key, text):
    """Helm values (JSON, which Helm reads as YAML): ``values`` with the cloud-config
    ``text`` at ``key`` (the keys from the top)."""
    if not key:
        raise Invalid("The cloud-config needs a place in the values.")
    made = copy.deepcopy(values or {})
    where = made
    for part in key[:-1]:
        where = where.setdefault(part, {})
        if not isinstance(where, dict):
            raise Invalid("The values' %s is not a mapping." % part)
    where[key[-1]] = text
    return json.dumps(made, indent=2, sort_keys=True)


# The [Global] keys the cluster autoscaler's magnum provider reads (gcfg refuses a file
# with any other): a password, its user's domain as domain-*, or Magnum's trust.
AUTOSCALER_KEYS = ('auth-url', 'username', 'user-id', 'password', 'tenant-id', 'tenant-name',
                   'trust-id', 'domain-id', 'domain-name', 'region', 'ca-file', 'tls-insecure')


def autoscaler_config(sections):
    """The cluster autoscaler's cloud-config: [Global] of ``sections`` in the keys its
    magnum provider reads (the user's domain as domain-*, which it also scopes a project
    name with; the catalog's public endpoints). An application credential is refused:
    that provider signs in with a password or a trust only."""
    found = dict(sections).get('Global') or []
    keys = [key for key, _value in found]
    if any(key.startswith('application-credential') for key in keys):
        raise Invalid("auto_scaling_enabled: the cluster autoscaler's magnum provider cannot "
                      "sign in with an application credential (it takes a password or a "
                      "Keystone trust): give clusters trusts, as Magnum does (the API's "
                      "--trustee-domain with --cluster-user-trust).")
    given = dict(found)
    for domain in ('id', 'name'):
        user_domain = given.pop('user-domain-' + domain, None)
        project_domain = given.pop('tenant-domain-' + domain, None)
        if project_domain and user_domain and project_domain != user_domain:
            raise Invalid("auto_scaling_enabled: the cluster autoscaler's magnum provider "
                          "takes one domain for the user and the project; the cloud's are "
                          "%s and %s." % (user_domain, project_domain))
        if user_domain or project_domain:
            given.setdefault('domain-' + domain, user_domain or project_domain)
    return render([('Global', [(key, given[key]) for key in AUTOSCALER_KEYS if key in given])])


# The octavia-ingress-controller reads its credential as YAML with the project keys
# named project-* (the cloud-config's tenant-*); the rest as in [Global].
INGRESS_KEYS = {'tenant-id': 'project-id', 'tenant-name': 'project-name',
                'tenant-domain-id': 'project-domain-id',
                'tenant-domain-name': 'project-domain-name'}


def ingress_config(sections, cluster_name):
    """The octavia-ingress-controller's configuration (YAML; JSON is YAML) from the
    cloud-config's sections: ``cluster-name`` (its load balancers and security groups
    are then ``kube_ingress_<cluster-name>_...``), ``openstack`` from [Global],
    ``octavia`` from [LoadBalancer] (subnet, floating network, provider)."""
    found = dict(sections)
    balancer = dict(found.get('LoadBalancer') or [])
    octavia = dict((key, balancer[key]) for key in ('subnet-id', 'floating-network-id')
                   if balancer.get(key))
    if balancer.get('lb-provider'):
        octavia['provider'] = balancer['lb-provider']
    for key, value in found.get('Global') or []:
        _quote(key, value)
    return json.dumps({'cluster-name': cluster_name,
                       'openstack': dict((INGRESS_KEYS.get(k, k), v)
                                         for k, v in found.get('Global') or []),
                       'octavia': octavia}, indent=2, sort_keys=True)


def parse(text):
    """The sections of a cloud-config ``render`` wrote (what tests and checks read)."""
    sections, current = {}, None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(('#', ';')):
            continue
        if line.startswith('[') and line.endswith(']'):
            current = sections.setdefault(line[1:-1], {})
            continue
        key, value = line.split('=', 1) if '=' in line else (line, '')
        value = value.strip()
        if len(value) > 1 and value.startswith('"') and value.endswith('"'):
            value = _unquote(value[1:-1])
        current[key.strip()] = value
    return sections


def _unquote(text):
    out, escaped = [], False
    for char in text:
        if escaped or char != '\\':
            out.append(char)
            escaped = False
        else:
            escaped = True
    return ''.join(out)
