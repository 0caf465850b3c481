"""Property-based fuzzing of the running API from its own OpenAPI document (schemathesis):
every operation, at least 1 000 generated requests, never a server error, every 4xx in
Magnum's error body, and the store consistent afterwards (every list answers, nothing
is left *_IN_PROGRESS)."""

import time

import pytest
import requests
from werkzeug.http import HTTP_STATUS_CODES

from conftest import ApiServer

LATEST = {'OpenStack-API-Version': 'container-infra latest'}
TPL = {'name': 'tpl', 'coe': 'kubernetes', 'image_id': 'debian-12',
       'external_network_id': 'public', 'keypair_id': 'kp'}
EXAMPLES_PER_OPERATION = 40
LISTS = ('/v1/clustertemplates', '/v1/clusters/detail', '/v1/federations/detail',
         '/v1/quotas?all_tenants=1', '/v1/mservices', '/v1/stats')


@pytest.fixture
def api(sqlite_url, project, tmp_path):
    server = ApiServer(sqlite_url, project, tmp_path, workers=2,
                       args=['--health-interval', '0']).start()
    yield server
    server.stop()


def magnum_error(response):
    """What is wrong with a 4xx's body, or None when it is one of Magnum's error bodies:
    a client error's, the microversion-unsupported one (no status nor detail), or the
    one of pecan's own 404, 405 and 406 (an empty code)."""
    try:
        errors = response.json()['errors']
        error = errors[0]
        assert isinstance(errors, list) and isinstance(error['title'], str)
        if error['code'] == 'magnum.microversion-unsupported':
            assert response.status_code == 406 and error['max_version']
            return None
        assert error['status'] == response.status_code
        assert error['code'] in ('client', '') or error['code'].startswith('magnum.')
        assert isinstance(error['detail'], str)
        if error['code'] == '':
            # the HTTP title only for a client that prefers JSON, as Magnum's (webob's)
            assert response.status_code in (404, 405, 406) and error['title'] in (
                '', HTTP_STATUS_CODES[response.status_code])
    except (ValueError, KeyError, IndexError, TypeError, AssertionError):
        return 'not a Magnum error body: %r' % response.text[:300]
    return None


def test_generated_requests_never_meet_a_server_error(api):
    schemathesis = pytest.importorskip('schemathesis')
    from hypothesis import HealthCheck, given, settings

    document = requests.get(api.url + '/v1/openapi.json', timeout=60).json()
    schema = schemathesis.openapi.from_dict(document)
    # Something to find: a template and a cluster made from it.
    requests.post(api.url + '/v1/clustertemplates', json=TPL, headers=LATEST,
                  timeout=60).raise_for_status()
    requests.post(api.url + '/v1/clusters', json={'name': 'c1', 'cluster_template_id': 'tpl'},
                  headers=LATEST, timeout=60).raise_for_status()
    sent, failures = [], []

    for result in schema.get_all_operations():
        operation = result.ok()

        @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, database=None,
                  derandomize=True, suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy())
        def fuzz(case):
            response = case.call(base_url=api.url, headers=LATEST, timeout=120)
            sent.append(response.status_code)
            where = '%s %s %r -> %d' % (case.method, case.formatted_path,
                                        getattr(case, 'body', None), response.status_code)
            if response.status_code >= 500:
                failures.append('%s: %s' % (where, response.text[:300]))
            elif response.status_code >= 400:
                problem = magnum_error(response)
                if problem:
                    failures.append('%s: %s' % (where, problem))

        fuzz()
    print('fuzz: %d requests, %d operations, statuses %s' % (
        len(sent), len(document['paths']), sorted(set(sent))))
    assert len(sent) >= 1000, len(sent)
    assert not failures, '\n'.join(failures[:20])

    # The store is consistent: the jobs the requests started end, every list answers.
    deadline = time.time() + 600
    while True:
        listed = dict((path, requests.get(api.url + path, headers=LATEST, timeout=60))
                      for path in LISTS)
        assert all(r.status_code == 200 for r in listed.values()), listed
        busy = [c['name'] for c in listed['/v1/clusters/detail'].json()['clusters']
                + listed['/v1/federations/detail'].json()['federations']
                if 'IN_PROGRESS' in (c['status'] or '')]
        if not busy:
            break
        assert time.time() < deadline, 'still in progress: %s' % busy
        time.sleep(2)
