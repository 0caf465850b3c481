"""Horizon's local settings for the dashboard test (tests/test_horizon.py): Horizon with
magnum-ui's Container Infra panels against the lab's Keystone, whose catalog names this
API as container-infra. Values come from the environment the test starts it with."""
import os

DEBUG = False
ALLOWED_HOSTS = ['127.0.0.1', 'localhost']
SECRET_KEY = os.environ['HORIZON_SECRET_KEY']
OPENSTACK_KEYSTONE_URL = os.environ['HORIZON_KEYSTONE_URL']
OPENSTACK_KEYSTONE_DEFAULT_ROLE = 'member'
OPENSTACK_KEYSTONE_MULTIDOMAIN_SUPPORT = False
OPENSTACK_API_VERSIONS = {'identity': 3}
# The region of the catalog Horizon reads every service from (the test's own region
# holds the lab's services and this API).
DEFAULT_SERVICE_REGIONS = {'*': os.environ['HORIZON_REGION']}
SESSION_ENGINE = 'django.contrib.sessions.backends.signed_cookies'
CACHES = {'default': {'BACKEND': 'django.core.cache.backends.locmem.LocMemCache'}}
COMPRESS_OFFLINE = True
LOGGING = {
    'version': 1, 'disable_existing_loggers': False,
    'handlers': {'console': {'class': 'logging.StreamHandler'}},
    'root': {'handlers': ['console'], 'level': 'WARNING'},
}
