"""Stand-in for pip's get-pip.py, for ansible-test's virtual environments.

ansible-test bootstraps pip in each sanity venv with a get-pip.py script from
ci-files.testing.ansible.com, which this network cannot reach. This script
does the same job offline-first: ensurepip (bundled with CPython) installs pip,
which then installs the requested pip version from the package index.
Invoked as ``python get_pip.py [pip install options] pip==X.Y``.
"""

import ensurepip
import os
import subprocess
import sys

CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt'  # Debian's, which trusts this network's proxy

ensurepip.bootstrap(upgrade=True)
args = [a for a in sys.argv[1:] if a not in ('--no-setuptools', '--no-wheel')]
if os.path.exists(CA_BUNDLE):
    args = ['--cert', CA_BUNDLE] + args
subprocess.check_call([sys.executable, '-m', 'pip', 'install'] + args)
