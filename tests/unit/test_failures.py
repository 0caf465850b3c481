"""failure_reason: what a failed task's result says of its cause (status_reason)."""

from ansible_collections.openstack.magnum.plugins.module_utils.core.failures import failure_reason

# As Ansible 2.19 reports a loop delegated to each node, one of which refused SSH.
UNREACHABLE_LOOP = {
    'changed': True, 'msg': 'All items completed', 'unreachable': True, 'results': [
        {'ansible_loop_var': 'item', 'changed': True, 'failed': False, 'item': 'c-master-0',
         'rc': 0, 'stderr': '', 'stdout': 'x86_64\n'},
        {'ansible_loop_var': 'item', 'changed': False, 'item': 'c-node-0',
         'msg': 'Task failed: Failed to connect to the host via ssh: ssh: connect to host '
                '10.0.0.5 port 22: Connection timed out', 'unreachable': True}]}


def test_a_loop_names_its_first_unreachable_item_and_its_error():
    assert failure_reason(UNREACHABLE_LOOP) == (
        'c-node-0 is unreachable: Failed to connect to the host via ssh: ssh: '
        'connect to host 10.0.0.5 port 22: Connection timed out')


def test_a_loop_names_its_first_failed_item_by_delegated_host_then_label():
    result = {'failed': True, 'msg': 'One or more items failed', 'results': [
        {'failed': False, 'item': {'name': 'a'}},
        {'failed': True, 'item': {'name': 'b'}, '_ansible_item_label': 'b',
         '_ansible_delegated_vars': {'ansible_delegated_host': 'c-node-1'},
         'msg': 'non-zero return code', 'stderr': 'E: no space left on device\n'},
        {'failed': True, 'item': 'c', 'msg': 'later'}]}
    assert failure_reason(result) == \
        'c-node-1: non-zero return code: E: no space left on device'
    del result['results'][1]['_ansible_delegated_vars']
    assert failure_reason(result).startswith('b: non-zero return code')


def test_a_plain_task_gives_its_message_and_the_end_of_its_stderr():
    assert failure_reason({'failed': True, 'msg': 'boom'}) == 'boom'
    assert failure_reason({'failed': True, 'msg': 'rc 1', 'stderr': 'x' * 2000}) == \
        'rc 1: ' + 'x' * 1500
    assert failure_reason({'failed': True}) == 'task failed'
    assert failure_reason(None, default='nothing') == 'nothing'


def test_a_commands_warnings_give_way_to_its_error():
    # kubeadm init on a master of one vCPU whose API server was slow (2026-11-28, lab guests)
    stderr = (
        '[WARNING NumCPU]: the number of available CPUs 1 is less than the required 2\n'
        'W1128 01:24:39.461829    1145 remote_runtime.go:1177] "RuntimeConfig failed"\n'
        '\t[WARNING ContainerRuntimeVersion]: You must update your container runtime\n'
        'error: error execution phase addon/coredns: couldn\'t retrieve DNS addon '
        'deployments: context deadline exceeded\n'
        'To see the stack trace of this error execute with --v=5 or higher\n')
    assert failure_reason({'failed': True, 'msg': 'non-zero return code', 'stderr': stderr}) \
        == ("non-zero return code: error: error execution phase addon/coredns: couldn't "
            "retrieve DNS addon deployments: context deadline exceeded")
    # without an error line: what is left once the warnings are gone
    assert failure_reason({'failed': True, 'msg': 'rc 2', 'stderr': (
        '[WARNING Swap]: swap is on\nno such file: /etc/kubernetes/admin.conf\n')}) == \
        'rc 2: no such file: /etc/kubernetes/admin.conf'


def test_a_filters_refusal_reads_as_its_cause_without_ansibles_wrapping():
    # ansible-core 2.19's message for a filter that raised while set_fact's args were made
    msg = ("Task failed: Finalization of task args for 'ansible.builtin.set_fact' failed: "
           "Error while resolving value for 'mesos_source': The filter plugin "
           "'openstack.magnum.mesos_artifacts' failed: mesos_artifacts: Mesos and Marathon "
           "are in no package repository these machines reach: set MAGNUM_MESOS_ARTIFACTS.")
    assert failure_reason({'failed': True, 'msg': msg}) == (
        'Mesos and Marathon are in no package repository these machines reach: '
        'set MAGNUM_MESOS_ARTIFACTS.')
    # a message that only looks alike further on is left whole
    plain = 'kubeadm join failed: Task failed: no'
    assert failure_reason({'failed': True, 'msg': plain}) == plain
