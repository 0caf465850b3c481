# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cluster API's providers on a management cluster, as clusterctl installs them (issue
#65; role capi_management): a provider's components - the YAML its release publishes
(``core-components.yaml``, ``infrastructure-components.yaml``, ...) or its own
``config/default`` rendered by kustomize - with clusterctl's variables given
(``${NAME}``, ``${NAME:=default}``), its images taken from where the operator keeps
them, and its webhooks' serving certificates issued here instead of by cert-manager: a CA
per provider, a serving certificate for each cert-manager ``Certificate`` of the
components (its DNS names, into the Secret it names), the CA injected as the
``caBundle`` of every webhook configuration and conversion webhook that asks for it
(``cert-manager.io/inject-ca-from``), cert-manager's own objects left out.

The components are parsed before anything is substituted: a variable's value lands in
one string of the parsed document, never in YAML text, so no value changes the
document's shape."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import base64
import re

from ansible_collections.openstack.magnum.plugins.module_utils.core import tls
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid

VARIABLE = re.compile(r'\$\{([A-Za-z_][A-Za-z0-9_]*)(?::=([^}]*))?\}')
CERT_MANAGER = 'cert-manager.io/'
INJECT = 'cert-manager.io/inject-ca-from'
WEBHOOK_KINDS = ('ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration')
# what a variable's value may hold: it lands in a container's arguments
VALUE = re.compile(r'^[^\x00-\x1f\x7f]*$')


def _walk(node, change):
    """``node`` with ``change`` applied to every string in it (keys kept)."""
    if isinstance(node, dict):
        return dict((key, _walk(value, change)) for key, value in node.items())
    if isinstance(node, list):
        return [_walk(value, change) for value in node]
    if isinstance(node, str):
        return change(node)
    return node


def variables(docs):
    """{name: default or None} of every clusterctl variable the components use."""
    found = {}

    def note(text):
        for match in VARIABLE.finditer(text):   # group 2 is None without ':='
            if found.get(match.group(1)) is None:
                found[match.group(1)] = match.group(2)
        return text
    _walk(docs, note)
    return found


def substitute(docs, values):
    """The documents with each ``${NAME}`` / ``${NAME:=default}`` replaced by
    ``values[NAME]``, else its default; a variable with neither is refused, naming it."""
    for name, value in (values or {}).items():
        if not isinstance(value, str) or not VALUE.match(value):
            raise Invalid("Cluster API variable %s must be a one-line string." % name)
    missing = sorted(name for name, default in variables(docs).items()
                     if default is None and name not in (values or {}))
    if missing:
        raise Invalid("Cluster API's components need a value for %s." % ', '.join(missing))

    def replace(text):
        return VARIABLE.sub(lambda m: (values or {}).get(m.group(1), m.group(2) or ''), text)
    return _walk(docs, replace)


def containers(doc):
    spec = (((doc.get('spec') or {}).get('template') or {}).get('spec') or {})
    return (spec.get('containers') or []) + (spec.get('initContainers') or [])


def image_name(reference):
    """An image reference's name: its last path component without tag or digest."""
    name = reference.split('@', 1)[0].rsplit('/', 1)[-1]
    return name.split(':', 1)[0]


def set_images(docs, images=None, repository=''):
    """Every container's image taken from ``images`` (name -> reference, by the image's
    name: 'cluster-api-controller') or, for those it does not name, from ``repository``
    (the image's name and tag under it), as clusterctl's image overrides."""
    for doc in docs:
        for container in containers(doc):
            reference = container.get('image') or ''
            name = image_name(reference)
            if name in (images or {}):
                container['image'] = images[name]
            elif repository:
                tail = reference.rsplit('/', 1)[-1]
                container['image'] = '%s/%s' % (repository.rstrip('/'), tail)
    return docs


def certificates(docs):
    """The cert-manager Certificates the components ask for: [{'namespace', 'name',
    'secret', 'dns_names', 'organization'}]."""
    found = []
    for doc in docs:
        if doc.get('kind') == 'Certificate' and doc.get('apiVersion', '').startswith(
                CERT_MANAGER):
            meta, spec = doc.get('metadata') or {}, doc.get('spec') or {}
            organizations = (spec.get('subject') or {}).get('organizations') or []
            found.append({'namespace': meta.get('namespace', ''), 'name': meta.get('name', ''),
                          'secret': spec.get('secretName', ''),
                          'dns_names': list(spec.get('dnsNames') or []),
                          'organization': organizations[0] if organizations else None})
    return found


def issue(certificate):
    """The serving certificate of ``certificate`` (certificates()) under a new CA of its
    own: {'ca': {'cert', 'key'}, 'cert', 'key'}."""
    cert, key = tls.create_ca('%s-%s-ca' % (certificate['namespace'], certificate['name']))
    ca = {'cert': cert, 'key': key}
    names = certificate['dns_names']
    if not names:
        raise Invalid('Certificate %s/%s names no DNS name.'
                      % (certificate['namespace'], certificate['name']))
    cert, key = tls.issue_keypair(ca['cert'], ca['key'], names[0],
                                  organization=certificate.get('organization'), sans=names,
                                  client=False)
    return {'ca': ca, 'cert': cert, 'key': key}


def serves(issued, certificate):
    """Whether certificates already ``issued`` still serve ``certificate``: signed by their
    CA, for exactly its DNS names."""
    try:
        return (tls.verify_signed_by(issued['cert'], issued['ca']['cert'])
                and sorted(tls.sans(issued['cert'])) == sorted(certificate['dns_names']))
    except (KeyError, TypeError, ValueError, Invalid):
        return False


def _b64(text):
    return base64.b64encode(text.encode('ascii')).decode('ascii')


def secret(certificate, issued):
    """The Secret cert-manager would have written for ``certificate``."""
    return {'apiVersion': 'v1', 'kind': 'Secret', 'type': 'kubernetes.io/tls',
            'metadata': {'name': certificate['secret'], 'namespace': certificate['namespace']},
            'data': {'tls.crt': _b64(issued['cert']), 'tls.key': _b64(issued['key']),
                     'ca.crt': _b64(issued['ca']['cert'])}}


def inject(docs, issued):
    """The documents without cert-manager's objects, each one that asks for a CA
    (``cert-manager.io/inject-ca-from: <namespace>/<certificate>``) given that
    certificate's CA (``issued``: {'<namespace>/<name>': issue()}) as its webhooks'
    ``caBundle``, its annotation gone; one asking for a certificate not issued is refused."""
    kept = []
    for doc in docs:
        if doc.get('apiVersion', '').startswith(CERT_MANAGER):
            continue
        annotations = (doc.get('metadata') or {}).get('annotations') or {}
        wanted = annotations.pop(INJECT, None)
        if wanted is not None:
            if wanted not in issued:
                raise Invalid('%s %s asks for the CA of %s, which the components do not '
                              'issue.' % (doc.get('kind'), doc['metadata'].get('name'), wanted))
            bundle = _b64(issued[wanted]['ca']['cert'])
            if doc.get('kind') in WEBHOOK_KINDS:
                for webhook in doc.get('webhooks') or []:
                    webhook.setdefault('clientConfig', {})['caBundle'] = bundle
            elif doc.get('kind') == 'CustomResourceDefinition':
                conversion = (doc.get('spec') or {}).get('conversion') or {}
                if conversion.get('strategy') == 'Webhook':
                    conversion.setdefault('webhook', {}).setdefault(
                        'clientConfig', {})['caBundle'] = bundle
        kept.append(doc)
    return kept


def prepare(docs, values=None, images=None, repository='', issued=None):
    """A provider's components ready to apply: variables given, images set, serving
    certificates issued (``issued``: those of an earlier run, {'<ns>/<name>': ...}, kept
    while they still serve), cert-manager's part replaced. Returns (documents with the
    Secrets first, {'<ns>/<name>': issued})."""
    docs = [doc for doc in docs if isinstance(doc, dict)]
    docs = set_images(substitute(docs, values), images, repository)
    now, secrets = {}, []
    for certificate in certificates(docs):
        key = '%s/%s' % (certificate['namespace'], certificate['name'])
        earlier = (issued or {}).get(key)
        now[key] = earlier if earlier and serves(earlier, certificate) else issue(certificate)
        secrets.append(secret(certificate, now[key]))
    docs = inject(docs, now)
    # namespaces and CRDs first, then the Secrets (their namespace exists), then the rest
    first = [d for d in docs if d.get('kind') in ('Namespace', 'CustomResourceDefinition')]
    rest = [d for d in docs if d.get('kind') not in ('Namespace', 'CustomResourceDefinition')]
    return first + secrets + rest, now
