"""The field table is the one schema: the cluster module's options, the playbook's survey
fields and the OpenAPI document's bounds are read from it, not restated (issue #46)."""

import pytest

from ansible_collections.openstack.magnum.plugins.filter.core import cluster_create_input
from ansible_collections.openstack.magnum.plugins.module_utils.core import fields
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid
from ansible_collections.openstack.magnum.plugins.modules import cluster as cluster_module
from ansible_collections.openstack.magnum.plugins.modules import cluster_template, nodegroup


def test_the_cluster_modules_options_are_the_create_fields():
    spec = cluster_module.ClusterModule.argument_spec
    assert set(spec) - {'name', 'state', 'fields'} == set(fields.CLUSTER_CREATE_INPUT) - {'name'}
    assert spec['node_count'] == {'type': 'int'} and spec['merge_labels'] == {'type': 'bool'}
    assert spec['labels'] == {'type': 'raw'}     # a dict, or the CLI's k=v form
    assert spec['keypair'] == {'type': 'str', 'no_log': False}


def test_the_template_and_node_group_modules_options_are_their_create_fields():
    spec = cluster_template.ClusterTemplateModule.argument_spec
    assert set(spec) - {'name', 'state'} == set(fields.TEMPLATE_CREATE_INPUT) - {'name', 'uuid'}
    assert spec['coe']['choices'] == ['kubernetes', 'swarm', 'mesos']
    assert spec['tls_disabled'] == {'type': 'bool'} and spec['apiserver_port'] == {'type': 'int'}
    spec = nodegroup.NodegroupModule.argument_spec
    assert set(spec) - {'cluster', 'name', 'state', 'fields'} == \
        set(fields.NODEGROUP_CREATE_INPUT) - {'name'}
    assert spec['node_taints'] == {'type': 'list', 'elements': 'dict'}
    assert spec['node_labels'] == {'type': 'raw'}


def test_a_surveys_variables_give_the_create_fields_that_are_set():
    play_vars = {'cluster': 'c1', 'node_count': 2, 'labels': None, 'ansible_check_mode': False,
                 'cluster_template_id': 'tpl', 'name': 'other'}
    assert cluster_create_input(play_vars) == {'node_count': 2, 'cluster_template_id': 'tpl'}


def test_the_least_values_are_checked_in_magnums_words_and_published():
    from api import openapi
    fields.check_minimum('node_count', 0)
    fields.check_minimum('name', 'anything')     # no minimum
    with pytest.raises(Invalid, match=r"^Invalid input for field/attribute master_count\. "
                                      r"Value: '0'\. Value should be greater or equal to 1$"):
        fields.check_minimum('master_count', 0)
    body = openapi.document()['components']['schemas']['ClusterCreate']['properties']
    for name, least in fields.MINIMUMS.items():
        if name in body:
            assert body[name]['minimum'] == least, name
