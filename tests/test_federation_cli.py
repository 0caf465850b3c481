"""`openstack coe federation ...` (osc_coe_federation, the federation spec's CLI) end to end
against a running API: the real openstackclient, the plugin's entry points, the API's
/v1/federations, its jobs."""

import json

from conftest import wait_for
from test_swarm import Rest

SHOW = ['uuid', 'name', 'hostcluster', 'members', 'project_id', 'properties', 'status',
        'status_reason']


def settled(rest, name):
    def done():
        proc = rest.coe('federation', 'show', name, '-f', 'json', check=False)
        if proc.returncode != 0:
            assert 'could not be found' in proc.stderr, proc.stderr
            return {'status': 'GONE'}
        shown = json.loads(proc.stdout)
        return shown if 'IN_PROGRESS' not in shown['status'] else None
    return wait_for(done, timeout=300, interval=1)


def test_the_federation_commands_of_the_spec(api_server):
    rest = Rest(api_server)
    rest.coe('cluster', 'template', 'create', 'tpl', '--coe', 'kubernetes', '--image',
             'debian-12', '--external-network', 'public', '--keypair', 'kp')
    uuids = {}
    for name in ('host', 'm1', 'm2'):
        rest.coe('cluster', 'create', name, '--cluster-template', 'tpl', '--node-count', '1')
        cluster = rest.settled(name)
        assert cluster['status'] == 'CREATE_COMPLETE', cluster
        uuids[name] = cluster['uuid']

    out = rest.coe('federation', 'create', 'myfederation', '--hostcluster', 'host',
                   '--property', 'dns=cluster.local')
    assert out.startswith('Request to create federation ') and out.strip().endswith(
        ' accepted'), out
    shown = settled(rest, 'myfederation')
    assert list(shown) == SHOW
    assert shown['hostcluster'] == uuids['host'] and shown['members'] == []
    assert shown['properties'] == "dns='cluster.local'"
    assert shown['status'].startswith('CREATE_'), shown

    out = rest.coe('federation', 'join', 'myfederation', 'm1', uuids['m2'])
    assert 'Request to join m1, %s to federation' % uuids['m2'] in out, out
    shown = settled(rest, 'myfederation')
    assert shown['members'] == [uuids['m1'], uuids['m2']], shown
    listed = json.loads(rest.coe('federation', 'list', '-f', 'json'))
    assert listed == [{'uuid': shown['uuid'], 'name': 'myfederation', 'members': 2,
                       'status': shown['status']}]
    # A member is not deleted under its federation.
    refused = rest.coe('cluster', 'delete', 'm1', check=False)
    assert refused.returncode != 0 and 'unjoin it first' in refused.stderr, refused.stderr

    rest.coe('federation', 'unjoin', 'myfederation', 'm1')
    assert settled(rest, 'myfederation')['members'] == [uuids['m2']]
    refused = rest.coe('federation', 'unjoin', 'myfederation', 'm1', check=False)
    assert refused.returncode != 0 and \
        'Cluster m1 is not a member of federation myfederation' in refused.stderr
    refused = rest.coe('federation', 'join', 'myfederation', 'nope', check=False)
    assert refused.returncode != 0 and 'Cluster nope could not be found' in refused.stderr

    rest.coe('federation', 'update', 'myfederation', '--property', 'zone=a',
             '--remove-property', 'dns')
    assert settled(rest, 'myfederation')['properties'] == "zone='a'"

    # The host stays while it hosts; a delete unjoins the members and goes.
    refused = rest.coe('cluster', 'delete', 'host', check=False)
    assert refused.returncode != 0 and 'hosts federation myfederation' in refused.stderr
    out = rest.coe('federation', 'delete', 'myfederation')
    assert out.strip() == 'Request to delete federation myfederation has been accepted.'
    assert settled(rest, 'myfederation') == {'status': 'GONE'}
    assert json.loads(rest.coe('federation', 'list', '-f', 'json')) == []
    for name in ('host', 'm1', 'm2'):
        rest.coe('cluster', 'delete', name)
        assert rest.settled(name)['status'] == 'GONE'
