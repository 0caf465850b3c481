"""The service's processes as the host supervises them (module_utils/service/programs.py):
what lands in a systemd unit or a supervisord program is written by that format's rules."""

import shlex

import pytest

from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid
from ansible_collections.openstack.magnum.plugins.module_utils.service import programs


def test_the_service_role_writes_programs_by_their_formats_rules():
    """What lands in a unit or a supervisord program is written by that format's rules:
    each argument one word whatever it holds, what cannot be written refused."""
    program = {'name': 'magnum-ansible-api', 'user': 'magnum', 'directory': '/var/lib/m',
               'command': ['/opt/m/bin/magnum-ansible-api', '--trustee-domain', 'a b"c$HOME%n'],
               'environment': {'MAGNUM_CLOUD': 'my "cloud"\\x', 'EMPTY': ''},
               'log': '/var/log/m/api.log'}
    unit = programs.systemd_unit(program)
    assert ('ExecStart="/opt/m/bin/magnum-ansible-api" "--trustee-domain" '
            '"a b\\"c$$HOME%%n"\n') in unit
    assert 'Environment="MAGNUM_CLOUD=my \\"cloud\\"\\\\x"\n' in unit and 'EMPTY' not in unit
    ini = programs.supervisor_program(program)
    command = [line for line in ini.splitlines() if line.startswith('command=')][0]
    assert shlex.split(command[len('command='):].replace('%%', '%')) == program['command']
    assert 'environment=MAGNUM_CLOUD="my \\"cloud\\"\\\\x"\n' in ini
    for bad in ({'command': ['/bin/x', 'a\nb']}, {'command': ['relative']},
                {'name': 'a b'}, {'user': 'Root;'}, {'environment': {'A-B': '1'}},
                {'directory': 'relative'}):
        with pytest.raises(Invalid):
            programs.systemd_unit(dict(program, **bad))
    with pytest.raises(Invalid):
        programs.supervisor_program(dict(program, command=['/bin/x', 'a ;b']))


def test_the_brokers_url_may_come_from_a_file_kept_off_the_environment(tmp_path, monkeypatch):
    """What the service role writes (MAGNUM_TRANSPORT_URL_FILE, as MAGNUM_DB_URL_FILE) is
    what the API and conductors read: the URL, its password with it, from the file."""
    from api.settings import Settings
    url_file = tmp_path / 'transport_url'
    url_file.write_text('rabbit://magnum:s3cret@10.0.0.6:5672/\n')
    monkeypatch.delenv('MAGNUM_TRANSPORT_URL', raising=False)
    monkeypatch.setenv('MAGNUM_TRANSPORT_URL_FILE', str(url_file))
    assert Settings(start_executor=False).transport_url == 'rabbit://magnum:s3cret@10.0.0.6:5672/'
    monkeypatch.setenv('MAGNUM_TRANSPORT_URL', 'rabbit://other/')
    assert Settings(start_executor=False).transport_url == 'rabbit://other/'
