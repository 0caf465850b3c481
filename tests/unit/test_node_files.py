"""Which files the controller pushes to which node, and the scp/ssh command that does it
(the command itself runs against real nodes in test_kubernetes.py's node preparation)."""

import shlex

import pytest

from ansible_collections.openstack.magnum.plugins.module_utils.core import node_files
from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid


def steps_of(argv):
    """The commands of a ``/bin/sh -c 'a && b'`` argv, each as its argv."""
    assert argv[:2] == ['/bin/sh', '-c']
    steps = [[]]
    for token in shlex.split(argv[2]):
        if token == '&&':
            steps.append([])
        else:
            steps[-1].append(token)
    return steps


WANTED = [{'node': 'm', 'files': [{'src': '/a/kubelet', 'dest': '/b/kubelet', 'mode': '0755'},
                                  {'src': '/a/x.tar', 'dest': '/i/x.tar', 'mode': '0644'}]},
          {'node': 'w', 'files': [{'src': '/a/kubelet', 'dest': '/b/kubelet', 'mode': '0755'}]}]
LOCAL = '1111  /a/kubelet\n2222  /a/x.tar\n'


def test_sha1sum_output_is_read_by_path():
    assert node_files.parse_sums('ab  /x y\ncd  /z\n\ngarbage\n') == {'/x y': 'ab', '/z': 'cd'}
    assert node_files.parse_sums(None) == {}


def test_only_missing_or_different_files_are_pushed():
    node_sums = [{'item': WANTED[0], 'stdout': '1111  /b/kubelet\n9999  /i/x.tar\n'},
                 {'item': WANTED[1], 'stdout': ''}]
    assert node_files.files_to_push(WANTED, LOCAL, node_sums) == [
        {'node': 'm', 'files': [dict(WANTED[0]['files'][1], why='differs')]},
        {'node': 'w', 'files': [dict(WANTED[1]['files'][0], why='missing')]}]
    # Everything in place: nothing to push (a second run changes nothing).
    same = [{'item': WANTED[0], 'stdout': '1111  /b/kubelet\n2222  /i/x.tar\n'},
            {'item': WANTED[1], 'stdout': '1111  /b/kubelet\n'}]
    assert node_files.files_to_push(WANTED, LOCAL, same) == []


def test_an_archive_whose_images_the_node_holds_is_not_pushed_and_the_log_says_why():
    """A node image with the release baked in (cloud_image_kube_tag) holds the binaries at
    their destinations and the images imported into containerd, not the archives."""
    archive = {'src': '/a/x.tar', 'dest': '/i/x.tar', 'mode': '0644',
               'images': ['registry.k8s.io/pause:3.10.2', 'registry.k8s.io/etcd:3.6.8-0']}
    wanted = [{'node': 'm', 'files': [WANTED[0]['files'][0], archive]},
              {'node': 'w', 'files': [WANTED[0]['files'][0], archive]}]
    mark = node_files.IMAGES_MARK
    node_sums = [
        # baked: kubelet as on the controller, both images in containerd, no archive
        {'item': wanted[0], 'stdout': '1111  /b/kubelet\n%s\nregistry.k8s.io/etcd:3.6.8-0\n'
                                      'registry.k8s.io/pause:3.10.2\n' % mark},
        # another release's kubelet, one of the two images: both pushed
        {'item': wanted[1], 'stdout': '7777  /b/kubelet\n%s\nregistry.k8s.io/pause:3.10.2\n'
                                      % mark}]
    plan = node_files.files_to_push(wanted, LOCAL, node_sums)
    assert plan == [{'node': 'w', 'files': [dict(WANTED[0]['files'][0], why='differs'),
                                            dict(archive, why='missing')]}]
    assert node_files.push_report(wanted, plan) == [
        'm: holds all 2 files and images it is given (its image or an earlier run): '
        'nothing pushed',
        'w: pushing 2 of 2 (another version of: kubelet; lacks: x.tar)']
    # The image names after the mark are not taken for checksums.
    assert node_files.parse_sums(node_sums[0]['stdout']) == {'/b/kubelet': '1111'}


def test_a_source_the_controller_could_not_checksum_is_named():
    with pytest.raises(Invalid, match='/a/x.tar is not on the controller'):
        node_files.files_to_push(WANTED, '1111  /a/kubelet\n', [])


def test_the_push_reaches_the_node_as_ansible_does_and_renames_at_the_end():
    host = {'ansible_host': '10.0.0.5', 'ansible_user': 'root', 'ansible_port': 2222,
            'ansible_ssh_private_key_file': '/k/id key',
            'ansible_ssh_common_args': '-o StrictHostKeyChecking=no -o ConnectTimeout=10',
            'ansible_scp_extra_args': '-l 8000'}
    steps = steps_of(node_files.push_command(host, WANTED[0]['files']))
    options = ['-o', 'BatchMode=yes', '-i', '/k/id key', '-o', 'StrictHostKeyChecking=no',
               '-o', 'ConnectTimeout=10']
    ssh = ['ssh'] + options + ['-p', '2222', 'root@10.0.0.5']
    # The destinations' directories first (each once).
    assert steps.pop(0) == ssh + ['mkdir -p /b /i']
    assert steps[0] == ['scp', '-q'] + options + ['-P', '2222', '-l', '8000', '/a/kubelet',
                                                  'root@10.0.0.5:/b/kubelet.magnum-part']
    assert steps[1][-2:] == ['/a/x.tar', 'root@10.0.0.5:/i/x.tar.magnum-part']
    assert steps[2][:-1] == ssh
    assert steps[2][-1] == ('chmod 0755 /b/kubelet.magnum-part && mv -f /b/kubelet.magnum-part '
                            '/b/kubelet && chmod 0644 /i/x.tar.magnum-part && mv -f '
                            '/i/x.tar.magnum-part /i/x.tar')


def test_a_container_node_of_this_engine_is_pushed_to_with_docker_cp():
    host = {'ansible_host': '10.0.0.5', 'ansible_user': 'root',
            'magnum_node_container': 'k-abc-master-0'}
    steps = steps_of(node_files.push_command(host, WANTED[0]['files']))
    quiet = ['>/dev/null']
    assert steps[0] == ['docker', 'exec', 'k-abc-master-0', 'mkdir', '-p', '/b', '/i'] + quiet
    assert steps[1] == ['docker', 'cp', '/a/kubelet', 'k-abc-master-0:/b/kubelet.magnum-part'] \
        + quiet
    assert steps[2][-3:] == ['/a/x.tar', 'k-abc-master-0:/i/x.tar.magnum-part'] + quiet
    assert steps[3] == ['docker', 'exec', 'k-abc-master-0', 'sh', '-c', (
        'chmod 0755 /b/kubelet.magnum-part && mv -f /b/kubelet.magnum-part /b/kubelet && '
        'chmod 0644 /i/x.tar.magnum-part && mv -f /i/x.tar.magnum-part /i/x.tar')] + quiet


def test_an_ipv6_node_is_bracketed_for_scp_only():
    steps = steps_of(node_files.push_command({'ansible_host': 'fd00::5'}, WANTED[1]['files']))
    assert steps[1][-1] == '[fd00::5]:/b/kubelet.magnum-part'
    assert steps[0][-2:] == ['fd00::5', 'mkdir -p /b'] and '-p' in steps[0]
    assert steps[2][-2] == 'fd00::5'


def test_a_push_without_an_address_or_files_or_to_a_relative_path_is_refused():
    with pytest.raises(Invalid, match='no address'):
        node_files.push_command({}, WANTED[1]['files'])
    with pytest.raises(Invalid, match='no files'):
        node_files.push_command({'ansible_host': 'h'}, [])
    with pytest.raises(Invalid, match='not an absolute path'):
        node_files.push_command({'ansible_host': 'h'}, [{'src': '/a', 'dest': 'b'}])


def test_a_user_who_becomes_root_is_given_the_copies_in_their_home_then_sudo_places_them():
    """A cloud image's default user (ansible_become, as the OpenStack provider's debian)
    cannot write /usr/local/bin: scp into ~/.magnum-push, then one `sudo -n` makes the
    directories, hands the copies to root and renames them over the old files."""
    host = {'ansible_host': '10.113.0.50', 'ansible_user': 'debian', 'ansible_become': 'True'}
    steps = steps_of(node_files.push_command(host, WANTED[0]['files']))
    assert steps[0][-2:] == ['debian@10.113.0.50', 'mkdir -p .magnum-push']
    assert steps[1][-2:] == ['/a/kubelet', 'debian@10.113.0.50:.magnum-push/0.magnum-part']
    assert steps[2][-2:] == ['/a/x.tar', 'debian@10.113.0.50:.magnum-push/1.magnum-part']
    assert steps[3][-2] == 'debian@10.113.0.50'
    sudo = shlex.split(steps[3][-1])
    assert sudo[:4] == ['sudo', '-n', 'sh', '-c'] and len(sudo) == 5
    assert sudo[4] == (
        'mkdir -p /b /i && chown 0:0 .magnum-push/0.magnum-part && mv -f '
        '.magnum-push/0.magnum-part /b/kubelet.magnum-part && chown 0:0 '
        '.magnum-push/1.magnum-part && mv -f .magnum-push/1.magnum-part /i/x.tar.magnum-part && '
        'chmod 0755 /b/kubelet.magnum-part && mv -f /b/kubelet.magnum-part /b/kubelet && '
        'chmod 0644 /i/x.tar.magnum-part && mv -f /i/x.tar.magnum-part /i/x.tar')
    # root, or no become: straight to the destinations, no sudo.
    for plain in ({'ansible_user': 'root'}, {'ansible_become': False}):
        steps = steps_of(node_files.push_command(dict(host, **plain), WANTED[1]['files']))
        assert steps[1][-1].endswith(':/b/kubelet.magnum-part')
        assert 'sudo' not in ' '.join(steps[-1])
