"""This host's processes as /proc shows them, and the killing of a process tree: the
conductor's clean-up of a job's runs (api/executor.py) and the playbook server's of a
run whose launcher went (api/playbook_server.py). Only the standard library: the
playbook server imports it before anything else."""

import os
import signal


def table(proc='/proc'):
    """pid -> (parent pid, command line) of every process on this host."""
    found = {}
    try:
        pids = [int(p) for p in os.listdir(proc) if p.isdigit()]
    except OSError:
        return found
    for pid in pids:
        try:
            with open(os.path.join(proc, str(pid), 'cmdline'), 'rb') as handle:
                cmdline = handle.read().decode('utf-8', 'replace')
            with open(os.path.join(proc, str(pid), 'stat'), 'rb') as handle:
                ppid = int(handle.read().decode('utf-8', 'replace').rsplit(')', 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        found[pid] = (ppid, cmdline)
    return found


def tree(roots, processes):
    """``roots`` and every process under them in ``processes`` (a ``table``)."""
    children = {}
    for pid, (ppid, _cmdline) in processes.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = set(), list(roots)
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, ()))
    return found


def kill(pids, killed, spare):
    """SIGKILL to each of ``pids`` and to its process group (Ansible's workers start
    sessions of their own), but the group ``spare`` and those in ``killed`` (which it
    adds to). Returns whether any of them was still there."""
    there = False
    for pid in pids:
        try:
            group = os.getpgid(pid)
            if group != spare and group not in killed:
                os.killpg(group, signal.SIGKILL)
                killed.add(group)
            os.kill(pid, signal.SIGKILL)
            there = True
        except (ProcessLookupError, PermissionError):
            continue
    return there
