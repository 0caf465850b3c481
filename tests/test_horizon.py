"""Horizon's Container Infra panels (magnum-ui 19 on Horizon 26) against this API.

The dashboard as an operator deploys it (tests/horizon/install.sh), logging in through the
lab's Keystone, whose catalog names this API as container-infra; driven in Debian's
headless chromium through WebDriver: log in, list, create a template and a cluster from the
dashboard's forms, watch the cluster reach CREATE_COMPLETE, resize it, delete both."""
import contextlib
import json
import os
import shutil
import subprocess
import time

import pytest
import requests
import yaml

from conftest import LAB_CLOUDS_YAML, NEEDS_LAB, free_port, lab_connect, wait_for
from test_keystone_auth import RUN, coe, identities, lab_region_connection

HORIZON_VENV = os.environ.get('MAGNUM_HORIZON_VENV')
CHROMEDRIVER = shutil.which('chromedriver')
pytestmark = [
    *NEEDS_LAB, pytest.mark.client,
    pytest.mark.skipif(not HORIZON_VENV or not CHROMEDRIVER,
                       reason='needs Horizon with magnum-ui (tests/horizon/install.sh <venv>, '
                              'MAGNUM_HORIZON_VENV=<venv>) and chromium-driver'),
]


@contextlib.contextmanager
def lab_services_in(admin, region):
    """The lab's public endpoints copied into ``region`` (which holds the API's): Horizon
    reads every service from one region."""
    lab_region = admin.config.get_region_name()
    made = []
    try:
        for endpoint in admin.identity.endpoints(interface='public'):
            if endpoint.region_id == lab_region:
                made.append(admin.identity.create_endpoint(
                    service_id=endpoint.service_id, interface='public', region_id=region,
                    url=endpoint.url))
        yield
    finally:
        for endpoint in made:
            admin.identity.delete_endpoint(endpoint)


@contextlib.contextmanager
def horizon(keystone_url, region, log):
    port = free_port()
    env = dict(os.environ, DJANGO_SETTINGS_MODULE='openstack_dashboard.settings',
               HORIZON_SECRET_KEY=RUN, HORIZON_KEYSTONE_URL=keystone_url,
               HORIZON_REGION=region)
    with open(log, 'w') as out:
        proc = subprocess.Popen(
            [os.path.join(HORIZON_VENV, 'bin', 'django-admin'), 'runserver', '--insecure',
             '--noreload', '127.0.0.1:%d' % port], env=env, stdout=out,
            stderr=subprocess.STDOUT)
    url = 'http://127.0.0.1:%d' % port

    def serving():
        assert proc.poll() is None, log.read_text()
        try:
            return requests.get(url + '/auth/login/', timeout=30).status_code == 200
        except requests.ConnectionError:
            return False
    try:
        wait_for(serving, timeout=120, interval=1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


class Dashboard(object):
    """Headless chromium on the dashboard, acting as a user does: waits for what a user
    would see before acting on it."""

    def __init__(self, url, shots):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        options = webdriver.ChromeOptions()
        for arg in ('--headless=new', '--no-sandbox', '--disable-dev-shm-usage',
                    '--window-size=1400,900'):
            options.add_argument(arg)
        options.binary_location = shutil.which('chromium') or shutil.which('chromium-browser')
        self.driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
        self.url, self.shots, self.shot = url, shots, 0

    def wait(self, condition, timeout=60):
        from selenium.webdriver.support.ui import WebDriverWait
        return WebDriverWait(self.driver, timeout).until(condition)

    def find(self, xpath, timeout=60):
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions as ec
        return self.wait(ec.visibility_of_element_located((By.XPATH, xpath)), timeout)

    def click(self, xpath):
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions as ec
        self.wait(ec.element_to_be_clickable((By.XPATH, xpath))).click()

    def type(self, name, text):
        field = self.find('//*[@name="%s"]' % name)
        field.clear()
        field.send_keys(text)

    def choose(self, name, text):
        """Pick ``text`` in the select ``name`` once the dashboard has loaded it."""
        from selenium.webdriver.support.ui import Select
        xpath = '//select[@name="%s"][option[normalize-space()="%s"]]' % (name, text)
        Select(self.find(xpath)).select_by_visible_text(text)

    def step(self, title):
        self.click('//div[contains(@class,"modal")]//a[normalize-space()="%s"]' % title)

    def open(self, path):
        self.driver.get(self.url + path)

    def body(self):
        from selenium.webdriver.common.by import By
        return self.driver.find_element(By.TAG_NAME, 'body').text

    def row(self, name):
        """The table row of ``name`` as the page shows it now (reloaded), or None."""
        from selenium.common.exceptions import TimeoutException
        self.driver.refresh()
        try:
            self.find('//table', timeout=30)
        except TimeoutException:
            return None
        time.sleep(1)   # the table fills after the page
        line = [ln for ln in self.body().splitlines() if ln.startswith(name + ' ')]
        return line[0] if line else ''

    def row_action(self, name, action):
        row = '//tr[td//a[normalize-space()="%s"]]' % name
        self.click(row + '//button[contains(@class,"dropdown-toggle")]')
        self.click(row + '//a[normalize-space()="%s"]' % action)

    def screenshot(self, name):
        self.shot += 1
        path = os.path.join(self.shots, '%02d-%s.png' % (self.shot, name))
        self.driver.save_screenshot(path)
        return path

    def login(self, user, password):
        self.open('/auth/login/')
        self.type('username', user)
        self.type('password', password)
        self.click('//button[@id="loginBtn"]')
        self.find('//*[contains(@class,"navbar")]')

    def quit(self):
        self.driver.quit()


def coe_show(clouds_yaml, *args):
    found = coe(clouds_yaml, 'alice', *(args + ('-f', 'json')), ok=False)
    return json.loads(found.stdout) if found.returncode == 0 else None


def test_the_container_infra_panels_drive_a_cluster_through_this_api(tmp_path, project):
    """Log in; create a template from the dashboard's form as it comes (Magnum's defaults:
    Cinder volumes, Calico), a cluster of 1 + 1 from its wizard; it reaches
    CREATE_COMPLETE in the table; resize to 2 workers; delete the cluster and the
    template. Each step checked in the API too (the unchanged CLI)."""
    admin = lab_connect(LAB_CLOUDS_YAML)
    with identities(tmp_path, project, provider='openstack') as (server, _, clouds_yaml, _):
        with open(clouds_yaml) as f:
            alice_cloud = yaml.safe_load(f)['clouds']['alice']
        alice = lab_region_connection(clouds_yaml, 'alice')
        keypair = 'kp-' + RUN
        # magnum-ui lists only images whose os_distro it knows (coreos, fedora-atomic,
        # fedora-coreos, ubuntu): the Debian image tagged ubuntu, as both drivers take.
        image = alice.image.create_image(
            name='debian-12-' + RUN, data=b'disk', disk_format='raw', container_format='bare',
            os_distro='ubuntu')
        alice.compute.create_keypair(name=keypair)
        keystone_url = alice_cloud['auth']['auth_url'].rstrip('/')
        if not keystone_url.endswith('/v3'):
            keystone_url += '/v3'
        shots = os.environ.get('MAGNUM_HORIZON_SHOTS') or str(tmp_path / 'shots')
        os.makedirs(shots, exist_ok=True)
        dash = None
        try:
            with lab_services_in(admin, RUN), \
                    horizon(keystone_url, RUN, tmp_path / 'horizon.log') as url:
                dash = Dashboard(url, shots)
                dash.login(alice_cloud['auth']['username'], alice_cloud['auth']['password'])

                dash.open('/project/cluster_templates/')
                dash.click('//button[contains(., "Create Cluster Template")]')
                dash.type('name', 'hz-tpl')
                dash.choose('coe', 'Kubernetes')
                dash.step('Node Spec')
                dash.choose('image_id', image.name)
                dash.choose('keypair_id', keypair)
                dash.step('Network')
                dash.choose('external_network_id', 'public')
                dash.click('//button[contains(., "Submit")]')
                assert wait_for(lambda: dash.row('hz-tpl'), timeout=60)
                made = coe_show(clouds_yaml, 'cluster', 'template', 'show', 'hz-tpl')
                assert (made['coe'], made['image_id'], made['keypair_id'],
                        made['external_network_id'], made['volume_driver'],
                        made['network_driver']) == (
                    'kubernetes', image.name, keypair, alice.network.find_network('public').id,
                    'cinder', 'calico'), made   # magnum-ui sends the network's id

                dash.open('/project/clusters/')
                dash.click('//button[contains(., "Create Cluster")]')
                dash.type('name', 'hz-c')
                dash.choose('cluster_template_id', 'hz-tpl')
                dash.choose('availability_zone', 'nova')
                dash.choose('keypair', keypair)
                dash.step('Size')
                dash.type('node_count', '1')
                dash.choose('master_flavor_id', 'm1.medium')
                dash.choose('flavor_id', 'm1.medium')
                dash.click('//button[contains(., "Submit")]')
                line = wait_for(lambda: (lambda r: r if r and (
                    'COMPLETE' in r or 'FAILED' in r) else None)(dash.row('hz-c')),
                    timeout=600, interval=5)
                assert 'CREATE_COMPLETE' in line, (line, coe_show(
                    clouds_yaml, 'cluster', 'show', 'hz-c'))
                dash.screenshot('clusters')
                shown = coe_show(clouds_yaml, 'cluster', 'show', 'hz-c')
                assert (shown['master_count'], shown['node_count'], shown['flavor_id'],
                        shown['labels'].get('cinder_csi_enabled')) == (
                    1, 1, 'm1.medium', 'false'), shown

                dash.row_action('hz-c', 'Resize Cluster')
                dash.type('node_count', '2')
                dash.click('//div[contains(@class,"modal")]//button[contains(., "Submit")]')
                wait_for(lambda: (lambda c: c and c['status'] == 'UPDATE_COMPLETE'
                                  and c['node_count'] == 2)(
                    coe_show(clouds_yaml, 'cluster', 'show', 'hz-c')), timeout=600,
                    interval=5)
                assert wait_for(lambda: (lambda r: r and 'UPDATE_COMPLETE' in r)(
                    dash.row('hz-c')), timeout=60)

                dash.row_action('hz-c', 'Delete Cluster')
                dash.click('//div[contains(@class,"modal")]//button[contains(., "Delete")]')
                wait_for(lambda: coe(clouds_yaml, 'alice', 'cluster', 'list', '-f',
                                     'json') == [], timeout=600, interval=5)
                assert wait_for(lambda: dash.row('hz-c') == '', timeout=60)

                dash.open('/project/cluster_templates/')
                dash.row_action('hz-tpl', 'Delete Cluster Template')
                dash.click('//div[contains(@class,"modal")]//button[contains(., "Delete")]')
                wait_for(lambda: coe(clouds_yaml, 'alice', 'cluster', 'template', 'list',
                                     '-f', 'json') == [], timeout=60, interval=2)
        except Exception:
            if dash is not None:
                dash.screenshot('failed')
            raise
        finally:
            if dash is not None:
                dash.quit()
            alice.compute.delete_keypair(keypair, ignore_missing=True)
            alice.image.delete_image(image)
