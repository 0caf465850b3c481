# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A federation's Karmada control plane credentials, kept (sealed) in the store under the
federation's uuid: its CA, front-proxy CA and the control plane's certificate (made
once, re-issued only when the host's addresses change, so an update does not roll the
control plane), and the controller's kubeconfig of it."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.openstack.magnum.plugins.module_utils.core import tls
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.kubeadm import kube_access
from ansible_collections.openstack.magnum.plugins.module_utils.federation import karmada

CERT = 'karmada-apiserver'
FRONT_PROXY_CLIENT = 'karmada-front-proxy-client'
ALL = karmada.CA_TYPES + (CERT, FRONT_PROXY_CLIENT)


def _ca(store, federation, ca_type, check_mode):
    found = store.certificate(federation['uuid'], ca_type, missing_ok=True)
    if found is None and not check_mode:
        cert, key = tls.create_ca('%s %s' % (federation['name'], ca_type))
        store.save_certificate(federation['uuid'], cert, key, ca_type)
        found = store.certificate(federation['uuid'], ca_type)
    return found


def _issued(store, federation, ca, kind, common_name, organization, hosts, server,
            check_mode):
    """The stored certificate ``kind``, issued again when it lacks one of ``hosts``."""
    found = store.certificate(federation['uuid'], kind, missing_ok=True)
    if found is not None and set(hosts or []) <= set(tls.sans(found['cert_pem'])):
        return found, False
    if check_mode or ca is None:
        return found, True
    cert, key = tls.issue_keypair(ca['cert_pem'], ca['key_pem'], common_name, organization,
                                  sans=hosts or None, server=server)
    store.save_certificate(federation['uuid'], cert, key, kind, replace=True)
    return store.certificate(federation['uuid'], kind), True


def certificates(store, federation, host, found, check_mode=False):
    """(certs for karmada.chart_values, changed)."""
    ca = _ca(store, federation, karmada.CA_TYPES[0], check_mode)
    proxy_ca = _ca(store, federation, karmada.CA_TYPES[1], check_mode)
    hosts = karmada.apiserver_hosts(found, host.get('master_addresses'))
    cert, changed = _issued(store, federation, ca, CERT, 'system:admin', 'system:masters',
                            hosts, True, check_mode)
    proxy, proxy_changed = _issued(store, federation, proxy_ca, FRONT_PROXY_CLIENT,
                                   'front-proxy-client', None, None, False, check_mode)
    if check_mode and (ca is None or cert is None or proxy is None):
        return None, True
    return {'ca': ca['cert_pem'], 'ca_key': ca['key_pem'], 'crt': cert['cert_pem'],
            'key': cert['key_pem'], 'front_proxy_ca': proxy_ca['cert_pem'],
            'front_proxy_crt': proxy['cert_pem'], 'front_proxy_key': proxy['key_pem']}, \
        changed or proxy_changed or ca is None


def access(store, federation, host, found):
    """The controller's kubeconfig of the federation's Karmada API server (through the
    host's node port), or None before the control plane's certificates exist."""
    ca = store.certificate(federation['uuid'], karmada.CA_TYPES[0], missing_ok=True)
    cert = store.certificate(federation['uuid'], CERT, missing_ok=True)
    if ca is None or cert is None:
        return None
    return kube_access.kubeconfig(karmada.endpoint(host, found), ca['cert_pem'],
                                  cert['cert_pem'], cert['key_pem'], 'karmada')


def forget(store, federation):
    """Remove the federation's credentials (its delete's end)."""
    for kind in ALL:
        store.delete_certificates(federation['uuid'], ca_cert_type=kind)
