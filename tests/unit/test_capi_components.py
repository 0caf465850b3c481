"""Cluster API's provider components made ready to apply without clusterctl or
cert-manager (module_utils/drivers/capi/components.py, role capi_management): clusterctl's
variables, the images' source, the webhooks' serving certificates and their CA injected.
The shapes are those of Cluster API's own `config/default` rendered by kustomize."""

import base64
import copy

import pytest
import yaml

from ansible_collections.openstack.magnum.plugins.module_utils.core import tls
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.capi import components

COMPONENTS = list(yaml.safe_load_all('''
apiVersion: v1
kind: Namespace
metadata: {name: capi-system}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: clusters.cluster.x-k8s.io
  annotations: {cert-manager.io/inject-ca-from: capi-system/capi-serving-cert}
spec:
  conversion:
    strategy: Webhook
    webhook:
      clientConfig:
        service: {name: capi-webhook-service, namespace: capi-system, path: /convert}
      conversionReviewVersions: [v1]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: capi-controller-manager, namespace: capi-system}
spec:
  template:
    spec:
      containers:
      - name: manager
        image: gcr.io/k8s-staging-cluster-api/cluster-api-controller:main
        args:
        - --diagnostics-address=${CAPI_DIAGNOSTICS_ADDRESS:=:8443}
        - "--feature-gates=MachinePool=${EXP_MACHINE_POOL:=true},\\
          ClusterTopology=${CLUSTER_TOPOLOGY:=false}"
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: capi-selfsigned-issuer, namespace: capi-system}
spec: {selfSigned: {}}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: capi-serving-cert, namespace: capi-system}
spec:
  dnsNames: [capi-webhook-service.capi-system.svc,
             capi-webhook-service.capi-system.svc.cluster.local]
  issuerRef: {kind: Issuer, name: capi-selfsigned-issuer}
  secretName: capi-webhook-service-cert
  subject: {organizations: [k8s-sig-cluster-lifecycle]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: capi-validating-webhook-configuration
  annotations: {cert-manager.io/inject-ca-from: capi-system/capi-serving-cert}
webhooks:
- name: validation.cluster.cluster.x-k8s.io
  clientConfig:
    service: {name: capi-webhook-service, namespace: capi-system, path: /validate}
- name: validation.machine.cluster.x-k8s.io
  clientConfig:
    service: {name: capi-webhook-service, namespace: capi-system, path: /validate-m}
'''))


def components_copy():
    return copy.deepcopy(COMPONENTS)


def by_kind(docs, kind):
    return [d for d in docs if d['kind'] == kind]


def test_variables_take_their_values_else_their_defaults_inside_one_string():
    docs = components.substitute(components_copy(), {'EXP_MACHINE_POOL': 'false'})
    args = by_kind(docs, 'Deployment')[0]['spec']['template']['spec']['containers'][0]['args']
    assert args == ['--diagnostics-address=:8443',
                    '--feature-gates=MachinePool=false,ClusterTopology=false']


def test_a_value_cannot_change_the_documents_shape_and_a_missing_one_is_named():
    with pytest.raises(Invalid, match='EXP_MACHINE_POOL must be a one-line string'):
        components.substitute(components_copy(), {'EXP_MACHINE_POOL': 'true\n- --evil'})
    docs = components_copy()
    docs[2]['spec']['template']['spec']['containers'][0]['args'].append('--x=${NEEDED}')
    with pytest.raises(Invalid, match='need a value for NEEDED'):
        components.substitute(docs, {})
    # a value that looks like YAML stays one string
    docs = components.substitute(docs, {'NEEDED': '{a: [1]} # &x *x !!python/object'})
    args = by_kind(docs, 'Deployment')[0]['spec']['template']['spec']['containers'][0]['args']
    assert args[-1] == '--x={a: [1]} # &x *x !!python/object'


def test_images_come_from_the_operators_registry_by_name_or_under_a_repository():
    docs = components.set_images(components_copy(), repository='registry.lab:5000/capi/')
    image = by_kind(docs, 'Deployment')[0]['spec']['template']['spec']['containers'][0]['image']
    assert image == 'registry.lab:5000/capi/cluster-api-controller:main'
    docs = components.set_images(components_copy(), images={
        'cluster-api-controller': 'registry.lab:5000/cluster-api-controller:v1.11.0'},
        repository='elsewhere')
    image = by_kind(docs, 'Deployment')[0]['spec']['template']['spec']['containers'][0]['image']
    assert image == 'registry.lab:5000/cluster-api-controller:v1.11.0'


def test_the_webhooks_are_served_with_a_certificate_of_the_ca_they_are_given():
    docs, issued = components.prepare(components_copy())
    assert not [d for d in docs if d['apiVersion'].startswith('cert-manager.io/')]
    assert list(issued) == ['capi-system/capi-serving-cert']
    ca = issued['capi-system/capi-serving-cert']['ca']['cert']
    [secret] = by_kind(docs, 'Secret')
    assert (secret['metadata'], secret['type']) == (
        {'name': 'capi-webhook-service-cert', 'namespace': 'capi-system'}, 'kubernetes.io/tls')
    served = base64.b64decode(secret['data']['tls.crt']).decode()
    assert tls.verify_signed_by(served, ca)
    assert sorted(tls.sans(served)) == ['capi-webhook-service.capi-system.svc',
                                        'capi-webhook-service.capi-system.svc.cluster.local']
    assert base64.b64decode(secret['data']['ca.crt']).decode() == ca
    bundle = base64.b64encode(ca.encode()).decode()
    webhooks = by_kind(docs, 'ValidatingWebhookConfiguration')[0]
    assert [w['clientConfig']['caBundle'] for w in webhooks['webhooks']] == [bundle, bundle]
    assert components.INJECT not in webhooks['metadata']['annotations']
    crd = by_kind(docs, 'CustomResourceDefinition')[0]
    assert crd['spec']['conversion']['webhook']['clientConfig']['caBundle'] == bundle
    # the namespace and CRDs first, then the Secret, then what needs it
    assert [d['kind'] for d in docs][:3] == ['Namespace', 'CustomResourceDefinition', 'Secret']


def test_a_second_run_keeps_the_certificates_while_they_serve():
    _, issued = components.prepare(components_copy())
    docs, again = components.prepare(components_copy(), issued=issued)
    assert again == issued
    # other DNS names (the service renamed): issued anew
    renamed = components_copy()
    renamed[4]['spec']['dnsNames'] = ['capi-webhooks.capi-system.svc']
    _, anew = components.prepare(renamed, issued=issued)
    assert anew['capi-system/capi-serving-cert']['cert'] != issued[
        'capi-system/capi-serving-cert']['cert']


def test_a_ca_asked_for_that_no_certificate_issues_is_refused():
    docs = [d for d in components_copy() if d['kind'] != 'Certificate']
    with pytest.raises(Invalid, match='asks for the CA of capi-system/capi-serving-cert'):
        components.prepare(docs)
