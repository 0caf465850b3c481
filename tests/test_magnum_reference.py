"""This API answers as real Magnum does: one request set (tests/magnum_reference.py)
replayed against magnum-api 23 (from PyPI, noauth, its conductor on RabbitMQ, SQLite)
and against this API, comparing status, version headers, the body's shape and error
texts. Every answer is identical except the deliberate differences listed below (and
in docs, "Magnum's answers"), each with its reason.

Needs the reference installed in a virtualenv of its own (MAGNUM_REFERENCE_VENV; .ci/run
makes it) and a RabbitMQ (MAGNUM_TEST_TRANSPORT_URL)."""

import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import requests

import magnum_reference as ref
from conftest import ApiServer, free_port, wait_for

VENV = os.environ.get('MAGNUM_REFERENCE_VENV')
TRANSPORT_URL = os.environ.get('MAGNUM_TEST_TRANSPORT_URL')
pytestmark = pytest.mark.skipif(
    not (VENV and Path(VENV, 'bin', 'magnum-api').exists() and TRANSPORT_URL),
    reason='needs the reference Magnum API (MAGNUM_REFERENCE_VENV: a virtualenv with magnum '
           '23 from PyPI; .ci/run makes one) and a RabbitMQ (MAGNUM_TEST_TRANSPORT_URL)')

SEED_TEMPLATE = dict(ref.TPL, image_id='debian-12')
# label -> why this API answers otherwise, on purpose.
DELIBERATE = {
    'template create: bad coe': 'Magnum 23 knows Kubernetes only; this project also drives '
                                'Docker Swarm and Mesos, so its list of COEs is longer.',
    'template create: bad bool': "Magnum answers 500 (a server error) for a boolean field "
                                 "given 'perhaps'; this API answers 400 naming the field.",
    'template create: list body': "Magnum answers 500 ('list' object has no attribute "
                                  "'keys'); this API answers 400: a JSON object is expected.",
    'sign with an empty body': "Magnum answers 500 ('Cannot convert Unset to primitive'); "
                               "this API answers 400 naming the missing cluster_uuid.",
    'POST a record': "Magnum answers 400 quoting a Python TypeError of its own "
                     "(Cluster.__init__() takes 1 positional argument); this API answers "
                     "405, as for every method a path has not.",
}


def _paste(tmp_path):
    """Magnum's own api-paste.ini without keystone's authtoken filter (noauth: the
    identity comes from the X-* headers, as this API's noauth reads them)."""
    text = Path(VENV, 'etc', 'magnum', 'api-paste.ini').read_text()
    paste = tmp_path / 'api-paste.ini'
    paste.write_text(text.replace(' authtoken ', ' '))
    return paste


@pytest.fixture
def reference(tmp_path, ours):
    """magnum-conductor and magnum-api 23 on a SQLite database of Magnum's own models
    (its migrations are MySQL's) holding what ``ours`` was given (seed: written before
    the reference starts, whose conductor keeps the file locked), on a RabbitMQ exchange
    of this test's own."""
    python = str(Path(VENV, 'bin', 'python'))
    db = tmp_path / 'reference.sqlite'
    subprocess.run([python, '-c', 'import sys, sqlalchemy as sa; '
                    'from magnum.db.sqlalchemy import models; '
                    'models.Base.metadata.create_all(sa.create_engine(sys.argv[1]))',
                    'sqlite:///%s' % db], check=True, timeout=120)
    seed(db, ours)
    port = free_port()
    conf = tmp_path / 'magnum.conf'
    conf.write_text('\n'.join([
        # An exchange of this test's own: no other conductor on the broker answers.
        '[DEFAULT]', 'transport_url = %s' % TRANSPORT_URL,
        'control_exchange = magnum-reference-%s' % uuid.uuid4().hex[:8],
        # No periodic task: its writes would lock the SQLite file under the API's reads
        # (it syncs clusters with Heat, which is not there).
        'periodic_enable = false',
        '[api]', 'host = 127.0.0.1', 'port = %d' % port, 'workers = 1',
        # One conductor process: of two forked ones, one at times stops serving.
        '[conductor]', 'workers = 1',
        'api_paste_config = %s' % _paste(tmp_path),
        '[database]', 'connection = sqlite:///%s' % db, '']))
    logs = [open(tmp_path / ('%s.log' % name), 'w') for name in ('conductor', 'api')]
    # Each in a process group of its own: the conductor forks workers, and all go.
    procs = [subprocess.Popen([str(Path(VENV, 'bin', binary)), '--config-file', str(conf)],
                              stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
             for binary, log in zip(('magnum-conductor', 'magnum-api'), logs)]
    url = 'http://127.0.0.1:%d' % port

    def answers():
        for proc in procs:
            assert proc.poll() is None, (tmp_path / 'api.log').read_text()[-3000:]
        try:   # a list reads through the conductor: both are up once it answers
            return requests.get(url + '/v1/clusters', headers=ref.MEMBER,
                                timeout=30).status_code == 200
        except requests.RequestException:
            return False
    try:
        wait_for(answers, timeout=180, interval=1)
        yield url
    finally:
        for proc in procs:
            os.killpg(proc.pid, signal.SIGKILL)   # nothing of the reference is kept
            proc.wait(timeout=60)
        for log in logs:
            log.close()


@pytest.fixture
def ours(sqlite_url, project, tmp_path):
    server = ApiServer(sqlite_url, project, tmp_path, workers=1,
                       args=['--health-interval', '0']).start()
    yield server.url
    server.stop()


def seed(reference_db, ours):
    """Template tpl and cluster c1 made here, then copied into the reference's database."""
    latest = dict(ref.MEMBER, **ref.mv('latest'))
    requests.post(ours + '/v1/clustertemplates', json=SEED_TEMPLATE, headers=ref.MEMBER,
                  timeout=60).raise_for_status()
    requests.post(ours + '/v1/clusters', json={'name': 'c1', 'cluster_template_id': 'tpl'},
                  headers=ref.MEMBER, timeout=60).raise_for_status()

    def created():
        shown = requests.get(ours + '/v1/clusters/c1', headers=latest, timeout=60).json()
        return shown if shown['status'] == 'CREATE_COMPLETE' else None
    cluster = wait_for(created, timeout=300, interval=1)
    template = requests.get(ours + '/v1/clustertemplates/tpl', headers=latest,
                            timeout=60).json()
    groups = [requests.get(ours + '/v1/clusters/c1/nodegroups/%s' % g['uuid'], headers=latest,
                           timeout=60).json()
              for g in requests.get(ours + '/v1/clusters/c1/nodegroups', headers=latest,
                                    timeout=60).json()['nodegroups']]
    subprocess.run([str(Path(VENV, 'bin', 'python')), '-c', ref.SEED_SCRIPT,
                    'sqlite:///%s' % reference_db], check=True, timeout=120, text=True,
                   input=json.dumps(ref.seed_rows(template, cluster, groups)))


def test_the_same_answers_as_magnum(reference, ours):
    same, different, deliberate = [], {}, {}

    def replay(request_set):
        for label, method, path, headers, body, extra in request_set:
            theirs = ref.answer(ref.call(reference, method, path, headers, body, extra))
            mine = ref.answer(ref.call(ours, method, path, headers, body, extra))
            found = ref.differences(theirs, mine)
            if label in DELIBERATE:
                deliberate[label] = found
            elif found:
                different[label] = found
            else:
                same.append(label)
    replay(ref.request_set() + ref.seeded_request_set())
    print('identical: %d, deliberately different: %d, different: %d'
          % (len(same), len(deliberate), len(different)), file=sys.stderr)
    assert not different, '\n'.join('%s: %s' % item for item in different.items())
    # The list of deliberate differences stays true: each still differs.
    assert all(deliberate.values()), [k for k, v in deliberate.items() if not v]
    assert sorted(deliberate) == sorted(DELIBERATE)
