"""Every template, cluster and node group value that reaches a file on a node, given control
characters, quotes and the metacharacters of the formats it lands in (systemd units,
environment files, YAML, TOML, resolv.conf, kubelet's flags): refused where it is given
(Invalid: the API's 400 in Magnum's shape, tests/test_hardening.py) or, where taken,
rendered inert - each file parsed back holds the value as given, and nothing more."""

import re
import shlex
import tomllib

import pytest
import yaml

from ansible_collections.openstack.magnum.plugins.module_utils.core import (
    labels as labels_mod, model, node_values)
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid
from ansible_collections.openstack.magnum.plugins.module_utils.drivers.kubeadm import (
    k8s_config, k8s_node)

# The probe first: a line break that would start a unit setting of its own.
PROBE = 'http://p:3128"\nExecStartPre=/bin/sh -c "id > /tmp/x"\nX="'
HOSTILE = ['"\nExecStartPre=/bin/sh -c "id > /tmp/x"\nX="', '"', "'", '\\', '%h', '$(id)',
           '`id`', '\r', '\t', '\u2028', '\x00', '\x1b[2J', ';id', ',x=y', '=', ']\n[x]', '#',
           ': x', '{{ 7 * 7 }}', '\n- x', ' --x', '\x85']
BASE = {'coe': 'kubernetes', 'image_id': 'debian-12', 'external_network_id': 'public',
        'keypair_id': 'k'}
# A valid value of each kind of field, which a hostile ending follows.
TEMPLATE_FIELDS = {'http_proxy': 'http://proxy.example:3128', 'https_proxy': 'http://p:3128',
                   'no_proxy': 'localhost,.example.com', 'dns_nameserver': '8.8.8.8',
                   'insecure_registry': 'registry.example:5000',
                   'docker_storage_driver': 'overlay2', 'network_driver': 'flannel',
                   'volume_driver': 'cinder'}
LABEL_BASES = {labels_mod.OPTIONS: '--v=2', labels_mod.REPOSITORY: 'registry.example/mirror',
               labels_mod.TAG: 'v1.30.0', labels_mod.BOOL: 'true', labels_mod.INT: '1',
               labels_mod.CIDR: '10.100.0.0/16', labels_mod.CIDRS: '10.0.0.0/8'}
# The labels of the user guide, the ones a driver reads without a catalogue entry, and one
# no driver knows.
LABELS = sorted(set(labels_mod.catalogue()) | {'dns_cluster_domain', 'my_own_label'})


def systemd_lines(text):
    """A unit's drop-in parsed back as systemd reads it: (section, {name: value}) of its
    Environment= words (quotes and backslashes as a shell's double quotes, %% as %)."""
    lines = text.splitlines()
    assert lines[0] == '[Service]'
    env = {}
    for line in lines[1:]:
        if not line.startswith('Environment='):
            continue
        words = shlex.split(line[len('Environment='):], posix=True)
        assert len(words) == 1, line
        name, _, value = words[0].replace('%%', '%').partition('=')
        env[name] = value
    return lines, env


def rendered_inert(tpl, cluster, group_name='default-worker'):
    """Render what the Kubernetes and Swarm drivers write on a node from the records and
    parse it back: raises AssertionError when a value leaks out of its place."""
    conf = k8s_config.settings(cluster, tpl, provider='docker')
    # containerd's and the engines' proxies (systemd drop-ins)
    lines, env = systemd_lines(k8s_node.proxy_dropin(conf['proxy']))
    assert env == dict((k, v) for k, v in conf['proxy'].items() if v)
    assert len(lines) == 1 + len(env), lines
    swarm = dict(HTTP_PROXY=tpl.get('http_proxy'), HTTPS_PROXY=tpl.get('https_proxy'),
                 NO_PROXY=tpl.get('no_proxy'))
    lines, env = systemd_lines('[Service]\n' + node_values.systemd_environment(swarm))
    assert env == dict((k, v) for k, v in swarm.items() if v)
    assert len(lines) == 1 + len(env), lines
    # containerd's TOML
    parsed = tomllib.loads(k8s_config.containerd_config(conf))
    cri = parsed['plugins']['io.containerd.grpc.v1.cri']
    assert cri['sandbox_image'] == '%s/pause:%s' % (conf['image_repository'], conf['pause_tag'])
    if conf['insecure_registry']:
        hosts = tomllib.loads(k8s_config.registry_hosts(conf)[conf['insecure_registry']][
            'hosts.toml'])
        assert hosts['server'] == 'http://' + conf['insecure_registry']
        assert list(hosts['host']) == ['https://' + conf['insecure_registry']]
    # resolv.conf: one server per line, nothing else
    resolv = k8s_config.resolv_conf(conf, 'nameserver 192.0.2.53\n').splitlines()
    assert all(re.match(r'\Anameserver [0-9.]+\Z', line) for line in resolv), resolv
    # kubeadm's documents (YAML), and kubelet's flags, which kubeadm writes unquoted into
    # its environment file: one word each
    node = {'name': 'n0', 'address': '10.0.0.5', 'role': 'worker', 'nodegroup': group_name}
    docs = k8s_config.kubeadm_init(conf, node, '10.0.0.1')
    assert list(yaml.safe_load_all(yaml.safe_dump_all(docs))) == docs
    for arg in docs[0]['nodeRegistration']['kubeletExtraArgs']:
        assert not re.search(r'[\s"\'\\`$]', arg['name'] + arg['value']), arg
    zone_and_group = dict(kv.split('=', 1) for kv in
                          docs[0]['nodeRegistration']['kubeletExtraArgs'][0]['value'].split(','))
    assert zone_and_group[k8s_config.NODEGROUP_LABEL] == group_name


def outcome(make):
    """'refused' when ``make`` raises Invalid, else 'inert' once its records render inert."""
    try:
        tpl, cluster, group = make()
    except Invalid:
        return 'refused'
    try:
        rendered_inert(tpl, cluster, group)
    except Invalid:   # refused when the operation renders it: the operation fails, nothing leaks
        return 'refused'
    return 'inert'


def template_with(field, value):
    def make():
        tpl = model.build_template(dict(BASE, **{field: value}), project_id='p')
        return tpl, model.build_cluster({'cluster_template_id': tpl['uuid']}, tpl)[0], \
            'default-worker'
    return make


def cluster_with_label(key, value):
    def make():
        tpl = model.build_template(BASE, project_id='p')
        return tpl, model.build_cluster({'cluster_template_id': tpl['uuid'],
                                         'labels': {key: value}}, tpl)[0], 'default-worker'
    return make


def group_named(name):
    def make():
        tpl = model.build_template(BASE, project_id='p')
        cluster = model.build_cluster({'cluster_template_id': tpl['uuid']}, tpl)[0]
        return tpl, cluster, model.build_nodegroup({'name': name}, cluster, tpl)['name']
    return make


def test_every_value_that_reaches_a_node_file_is_refused_or_inert():
    seen = {}
    for hostile in HOSTILE:
        for field, base in TEMPLATE_FIELDS.items():
            seen[('template', field, hostile)] = outcome(template_with(field, base + hostile))
        for key in LABELS:
            kind = labels_mod.catalogue().get(key, (labels_mod.STR,))[0]
            base = {'availability_zone': 'nova'}.get(key, LABEL_BASES.get(kind, 'x'))
            seen[('label', key, hostile)] = outcome(cluster_with_label(key, base + hostile))
        seen[('nodegroup', 'name', hostile)] = outcome(group_named('ng' + hostile))
    # each kind of value was taken somewhere (so the renders above ran) and refused somewhere
    assert set(seen.values()) == {'refused', 'inert'}
    # a line break is refused wherever it is given
    breaks = [h for h in HOSTILE if re.search('[\n\r\x85\u2028]', h)]
    leaked = [where for where, result in seen.items()
              if where[2] in breaks and result != 'refused']
    assert leaked == [], leaked


def test_the_probe_is_refused_and_a_stored_one_renders_no_unit_line():
    with pytest.raises(Invalid, match='Invalid input for field/attribute http_proxy'):
        model.build_template(dict(BASE, http_proxy=PROBE))
    # a template stored before the rule: its drop-in is refused, not written
    with pytest.raises(Invalid, match='control character'):
        k8s_node.proxy_dropin({'HTTP_PROXY': PROBE})
    assert k8s_node.proxy_dropin({'HTTP_PROXY': 'http://u:p%40ss@p:3128'}) == \
        '[Service]\nEnvironment="HTTP_PROXY=http://u:p%%40ss@p:3128"\n'


@pytest.mark.parametrize('value', ['8.8.8.8', '8.8.8.8, 1.1.1.1'])
def test_dns_nameserver_is_magnums_list_of_ipv4_addresses(value):
    tpl = model.build_template(dict(BASE, dns_nameserver=value))
    conf = k8s_config.settings(model.build_cluster({'cluster_template_id': tpl['uuid']}, tpl)[0],
                               tpl)
    assert k8s_config.resolv_conf(conf, '') == ''.join(
        'nameserver %s\n' % s.strip() for s in value.split(','))
    with pytest.raises(Invalid, match='Expected a single dns address or comma separated dns '
                                      'list, but received 8.8.8.8;'):
        model.build_template(dict(BASE, dns_nameserver='8.8.8.8;'))


def test_an_ipv6_host_is_bracketed_once_wherever_a_port_follows():
    from ansible_collections.openstack.magnum.plugins.module_utils.core.node_values import (
        bracketed)
    assert [bracketed(h) for h in ('10.0.0.1', 'node-1', 'fd00::5', '[fd00::5]')] == \
        ['10.0.0.1', 'node-1', '[fd00::5]', '[fd00::5]']
