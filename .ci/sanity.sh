#!/usr/bin/env bash
# ansible-test sanity, run from the collection path as ansible-test requires.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-python3}
pip_version=$("$py" -c "import re, ansible_test, pathlib; \
src = pathlib.Path(ansible_test.__file__).parent.joinpath('_internal/python_requirements.py').read_text(); \
print(re.search(r\"pip='([0-9.]+)'\", src).group(1))")
cache=~/.ansible/test/cache
mkdir -p "$cache"
cp "$top/.ci/get_pip_offline.py" "$cache/get_pip_${pip_version//./_}.py"
cd "$top/collections/ansible_collections/openstack/magnum"
exec ansible-test sanity --local --python "$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')" --requirements "$@"
