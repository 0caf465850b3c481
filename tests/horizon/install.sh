#!/usr/bin/env bash
# Horizon 26 with magnum-ui 19 (the Container Infra panels) in a virtualenv of its own,
# installed as magnum-ui's documentation says (its enabled files in Horizon's
# local/enabled), with tests/horizon/local_settings.py; static files collected and
# compressed once, so the dashboard serves them without a build per page.
# Usage: tests/horizon/install.sh <venv>
set -euo pipefail
venv=${1:?usage: install.sh <venv>}
here=$(cd "$(dirname "$0")" && pwd)
python3 -m venv "$venv"
# Horizon 26 (OpenStack 2025.2): Horizon 27 lists availability zones through openstacksdk,
# whose zones have a name where magnum-ui 19 reads novaclient's zoneName - the cluster
# form's required zone then offers nothing and the form cannot be submitted.
# python-magnumclient 5 dropped the input_auth_token argument magnum-ui 19 still passes
# (every panel then fails "Auth plugin requires parameters which were not given:
# auth_url", before any request): 4.11.0, as OpenStack 2025.2's constraints pin it.
"$venv/bin/pip" install -q horizon==26.0.0 magnum-ui==19.0.0 python-magnumclient==4.11.0
site=$("$venv/bin/python" -c 'import openstack_dashboard, os; print(os.path.dirname(openstack_dashboard.__file__))')
ui=$("$venv/bin/python" -c 'import magnum_ui, os; print(os.path.dirname(magnum_ui.__file__))')
cp "$ui"/enabled/_[0-9]*.py "$site/local/enabled/"
cp "$here/local_settings.py" "$site/local/local_settings.py"
export HORIZON_SECRET_KEY=install HORIZON_KEYSTONE_URL=http://127.0.0.1/identity/v3 HORIZON_REGION=none
export DJANGO_SETTINGS_MODULE=openstack_dashboard.settings
"$venv/bin/django-admin" collectstatic --noinput -v0
"$venv/bin/django-admin" compress --force -v0
