# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the deployment's infrastructure provider checks of a template or a cluster before
it is recorded: its descriptor's own checks (the docker provider: that the template names
an image it has), and on a cloud its images, flavors, networks, keypair and capacity, as
the caller. The API and the modules give the core one ProviderChecks in its settings
(``checks``); the core asks it and imports no provider."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.openstack.magnum.plugins.module_utils.core import drivers, fields
from ansible_collections.openstack.magnum.plugins.module_utils.providers import registry


class ProviderChecks(object):
    """``provider``: the provider's name (registry.NAMES; none checks nothing); ``cloud``:
    the cloud's name, or a connection or openstack.connect() arguments that act as the
    caller (a cloud provider's), connected at its first check."""

    def __init__(self, provider=None, cloud=None):
        self.provider = registry.by_name(provider or 'none')
        self.cloud_spec = cloud if self.provider.cloud else None
        self._cloud = None

    def _cloud_checks(self):
        if self._cloud is None:
            from ansible_collections.openstack.magnum.plugins.module_utils.providers.openstack \
                import cloud
            self._cloud = cloud.CloudChecks.connect(self.cloud_spec)
        return self._cloud

    def image_catalog(self, look_up=True):
        """image -> os_distro: Glance's lookup on a cloud (made when first asked: once the
        body's own fields are found good, as Magnum looks the image up after them), else
        None (the image catalog's)."""
        if self.cloud_spec and look_up:
            return lambda image: self._cloud_checks().image_distro(image)
        return None

    def template(self, record, image_changed=True, changed=True):
        """A template about to be recorded: the docker provider has its image (unless its
        driver brings its own infrastructure); a cloud has what it names."""
        if image_changed and self.provider.checks and \
                not drivers.by_name(record['driver']).own_infrastructure:
            self.provider.checks.template(record)
        if changed and self.cloud_spec:
            self._cloud_checks().template(record)
            self._cloud_checks().node_image(record)

    def cluster(self, cluster, template, groups):
        """A cluster about to be recorded: on the docker provider, its keypair's name (it
        names a file); on a cloud, its own fields, the template's external network, its
        image for the cluster's labels, room for its servers."""
        if self.provider.checks:
            self.provider.checks.cluster(cluster)
        if not self.cloud_spec:
            return
        checks = self._cloud_checks()
        checks.cluster(cluster)
        checks.external_network(template.get('external_network_id'), pick=True)
        checks.node_image(template, cluster.get('labels'))
        checks.capacity(template['server_type'],
                        [(fields.flavor_of(g.get('flavor_id')), g['node_count']) for g in groups])

    def reaches_nodes(self, cluster, template):
        """Whether this controller reaches the cluster's nodes at the addresses its last
        operation recorded (contract.Provider.reaches_nodes)."""
        return self.provider.reaches_nodes(cluster, template)


def with_checks(settings):
    """The core's ``settings`` (a module's core_settings) with the checks of their
    provider."""
    return dict(settings, checks=ProviderChecks(settings.get('provider'), settings.get('cloud')))
