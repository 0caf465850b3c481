# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Files only this service's user may read (secrets handed to jobs, credentials and
values files the modules write for Helm and kubernetes.core)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os


def write_private(path, text):
    """Write ``text`` to ``path`` with mode 0600, whole: the new content replaces the old
    in one rename, so a reader running beside it (another module run of the same job)
    sees either the old file or the new one, never a part."""
    path = str(path)
    staged = '%s.%d.tmp' % (path, os.getpid())
    fd = os.open(staged, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, 'w') as handle:
            handle.write(text)
        os.replace(staged, path)
    except BaseException:
        if os.path.exists(staged):
            os.remove(staged)
        raise
    return path


def replace_if_changed(path, text, check_mode=False):
    """Write ``text`` to ``path`` (as write_private) unless it holds it already; returns
    whether it changed (would change, in check mode)."""
    try:
        with open(path) as handle:
            changed = handle.read() != text
    except (IOError, OSError):
        changed = True
    if changed and not check_mode:
        write_private(path, text)
    return changed
