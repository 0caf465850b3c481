"""The provider's checks of a template before it is recorded (providers/checks.py): the
core asks the ProviderChecks its caller gives and imports no provider."""

import pytest

from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid
from ansible_collections.openstack.magnum.plugins.module_utils.providers.checks import (
    ProviderChecks, with_checks)


def test_the_local_provider_refuses_an_image_it_does_not_have_naming_what_it_has():
    local = ProviderChecks('docker')
    with pytest.raises(Invalid, match=r'^Image ubuntu-22\.04 could not be found\. The docker '
                                      r'provider has its Debian 12 node image only'):
        local.template({'driver': 'swarm_mode', 'image_id': 'ubuntu-22.04'})
    local.template({'driver': 'swarm_mode', 'image_id': 'debian-12'})
    # unchanged image (an update of other fields), a driver of its own infrastructure,
    # another provider: not the docker provider's to refuse
    local.template({'driver': 'swarm_mode', 'image_id': 'ubuntu-22.04'}, image_changed=False)
    local.template({'driver': 'k8s_capi_helm', 'image_id': 'ubuntu-22.04'})
    ProviderChecks('none').template({'driver': 'swarm_mode', 'image_id': 'ubuntu-22.04'})
    assert local.image_catalog() is None     # the image catalog's names


def test_a_cloud_is_the_openstack_providers_alone_and_is_not_reached_before_a_check():
    assert ProviderChecks('docker', cloud='lab').cloud_spec is None
    checks = with_checks({'provider': 'openstack', 'cloud': 'no-such-cloud'})['checks']
    assert checks.cloud_spec == 'no-such-cloud' and checks._cloud is None
    assert checks.image_catalog(look_up=False) is None


def test_the_local_provider_takes_a_keypair_name_not_a_path():
    """Its keypair names the file keypairs/<name>.pub that the nodes' authorized_keys
    gets: a name with '/' or beginning with '.' would read another file of the host."""
    local = ProviderChecks('docker')
    for name in ('kp', 'default', 'my key.2', 'ops@site_1'):
        local.cluster({'keypair': name}, {}, [])
    for name in ('../../root/.ssh/id_rsa', '.hidden', 'a/b', 'line\nbreak', ' x'):
        with pytest.raises(Invalid, match='is not a keypair name'):
            local.cluster({'keypair': name}, {}, [])
    ProviderChecks('none').cluster({'keypair': '../x'}, {}, [])


def test_the_health_reads_reach_a_clouds_nodes_only_on_floating_ips():
    """Whether the conductor reads a cluster's COE at its nodes' recorded addresses: local
    nodes always; a cloud's when the cluster (else its template) has floating IPs - without
    them its nodes are reached through a bastion, which only the playbook uses."""
    assert ProviderChecks('docker').reaches_nodes({'floating_ip_enabled': False}, {})
    cloud = ProviderChecks('openstack', cloud=None)
    assert cloud.reaches_nodes({'floating_ip_enabled': None}, {'floating_ip_enabled': True})
    assert not cloud.reaches_nodes({'floating_ip_enabled': None},
                                   {'floating_ip_enabled': False})
    assert not cloud.reaches_nodes({'floating_ip_enabled': False},
                                   {'floating_ip_enabled': True})
    assert cloud.reaches_nodes({'floating_ip_enabled': True}, {'floating_ip_enabled': False})
