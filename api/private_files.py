"""Files only this service's user may read (secrets handed to jobs).

Standalone on purpose (the collection's module_utils/core/private_files.py does the same for
modules): the auth cache (api/auth_cache.py) runs inside every module process of a job,
openstack.cloud's included, where only that module's collection can be imported."""

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
