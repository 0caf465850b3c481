"""The playbook runs yield the CPU to the API's requests (issue #63 item 4): a job worker
lowers its own thread's priority, which the processes it starts inherit, and the thread
that serves requests keeps its own."""

import os
import subprocess
import sys
import threading

from api.executor import lower_priority


def test_a_workers_runs_are_niced_and_the_rest_of_the_process_is_not():
    before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    seen = {}

    def worker():
        lower_priority(before + 7)
        seen['child'] = subprocess.run(
            [sys.executable, '-c', 'import os; print(os.nice(0))'], capture_output=True,
            text=True, check=True).stdout.strip()
        lower_priority(before + 3)   # never raised back
        seen['after'] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen == {'child': str(before + 7), 'after': before + 7}
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == before
    mine = subprocess.run([sys.executable, '-c', 'import os; print(os.nice(0))'],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert mine == str(before)
