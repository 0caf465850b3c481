"""`openstack coe federation ...`: the federation spec's commands (python-magnumclient has
none), as commands of the same group as `openstack coe cluster ...`. They call the API's
/v1/federations through the client python-magnumclient's plugin already made (its
session, endpoint, microversion header and error messages)."""

from osc_lib import utils
from osc_lib.cli import parseractions
from osc_lib.command import command

# The spec's columns: `federation list` and `federation show`.
LIST_COLUMNS = ('uuid', 'name', 'members', 'status')
SHOW_COLUMNS = ('uuid', 'name', 'hostcluster', 'members', 'project_id', 'properties',
                'status', 'status_reason')


def _client(cmd):
    return cmd.app.client_manager.container_infra.http_client


def _request(cmd, method, url, body=None):
    kwargs = {} if body is None else {'body': body}
    return _client(cmd).json_request(method, url, **kwargs)[1]


def _federation(cmd, ident):
    return _request(cmd, 'GET', '/v1/federations/%s' % ident)


def _federation_argument(parser):
    parser.add_argument('federation', metavar='<federation>', help='Federation (name or UUID)')


def _cluster_uuid(cmd, ident):
    return _request(cmd, 'GET', '/v1/clusters/%s' % ident)['uuid']


def _row(federation, columns):
    shown = dict(federation, hostcluster=federation.get('hostcluster_id'),
                 members=federation.get('member_ids') or [],
                 properties=utils.format_dict(federation.get('properties') or {}))
    if columns is LIST_COLUMNS:
        shown['members'] = len(shown['members'])
    return tuple(shown.get(column) for column in columns)


class CreateFederation(command.Command):
    """Create a federation hosted on a Kubernetes cluster."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('name', metavar='<name>', help='Name of the federation')
        parser.add_argument('--hostcluster', metavar='<cluster>', required=True,
                            help='Cluster (name or UUID) that hosts the control plane')
        parser.add_argument('--member', metavar='<cluster>', action='append', default=[],
                            help='Cluster (name or UUID) to join (repeat for more)')
        parser.add_argument('--property', metavar='<key=value>',
                            action=parseractions.KeyValueAction, default={},
                            help='Federation property, e.g. dns=cluster.local (repeat for more)')
        return parser

    def take_action(self, parsed_args):
        created = _request(self, 'POST', '/v1/federations', {
            'name': parsed_args.name, 'hostcluster_id': parsed_args.hostcluster,
            'member_ids': parsed_args.member, 'properties': parsed_args.property})
        print('Request to create federation %s accepted' % created['uuid'])


class ListFederation(command.Lister):
    """List federations, with their membership."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--limit', metavar='<limit>', type=int,
                            help='Maximum number of federations to return')
        parser.add_argument('--sort-key', metavar='<sort-key>', help='Column to sort by')
        parser.add_argument('--sort-dir', metavar='<sort-dir>', choices=['asc', 'desc'],
                            help='Direction to sort: asc or desc')
        return parser

    def take_action(self, parsed_args):
        query = [(k, v) for k, v in (('limit', parsed_args.limit),
                                     ('sort_key', parsed_args.sort_key),
                                     ('sort_dir', parsed_args.sort_dir)) if v is not None]
        url = '/v1/federations/detail'
        federations = []
        while url:   # every page (the API pages by `limit`, as Magnum's collections do)
            if query:
                url += ('&' if '?' in url else '?') + '&'.join('%s=%s' % q for q in query)
            page = _request(self, 'GET', url)
            federations += page['federations']
            url = None if parsed_args.limit else _next(page)
            query = []
        return LIST_COLUMNS, [_row(f, LIST_COLUMNS) for f in federations]


def _next(page):
    """The path of a collection's next page (Magnum gives a full URL) or None."""
    link = page.get('next')
    return '/v1' + link.split('/v1', 1)[1] if link and '/v1' in link else None


class ShowFederation(command.ShowOne):
    """Show a federation: its host, members, properties and status."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _federation_argument(parser)
        return parser

    def take_action(self, parsed_args):
        return SHOW_COLUMNS, _row(_federation(self, parsed_args.federation), SHOW_COLUMNS)


class UpdateFederation(command.Command):
    """Update a federation's properties."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _federation_argument(parser)
        parser.add_argument('--property', metavar='<key=value>',
                            action=parseractions.KeyValueAction, default={},
                            help='Property to set (repeat for more)')
        parser.add_argument('--remove-property', metavar='<key>', action='append',
                            default=[], help='Property to remove (repeat for more)')
        return parser

    def take_action(self, parsed_args):
        patch = [{'op': 'add', 'path': '/properties/%s' % key, 'value': value}
                 for key, value in sorted(parsed_args.property.items())]
        patch += [{'op': 'remove', 'path': '/properties/%s' % key}
                  for key in parsed_args.remove_property]
        if not patch:
            raise SystemExit('Nothing to update: give --property or --remove-property.')
        updated = _request(self, 'PATCH', '/v1/federations/%s' % parsed_args.federation,
                           patch)
        print('Request to update federation %s accepted' % updated['uuid'])


def _externals(cmd, federation_uuid):
    """The federation's external clusters, by name and by uuid."""
    found = {}
    for record in _request(cmd, 'GET', '/v1/federations/%s/external_clusters'
                           % federation_uuid)['external_clusters']:
        found[record['name']] = found[record['uuid']] = record
    return found


class _Membership(command.Command):
    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _federation_argument(parser)
        parser.add_argument('clusters', metavar='<cluster>', nargs=self.clusters_nargs,
                            help=self.clusters_help)
        return parser


class JoinFederation(_Membership):
    """Join clusters to a federation: Magnum clusters, and clusters that are not
    Magnum's given by a kubeconfig (--external)."""

    clusters_nargs = '*'
    clusters_help = 'Cluster (name or UUID)'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--external', metavar='<name=kubeconfig-file>', action='append',
                            default=[], help='A Kubernetes cluster that is not Magnum\'s, '
                            'named <name> in the federation and reached through the '
                            'current context of <kubeconfig-file> (a token or client '
                            'certificate given inline; kept sealed). Repeat for several.')
        return parser

    def take_action(self, parsed_args):
        if not parsed_args.clusters and not parsed_args.external:
            raise SystemExit('Name a cluster to join, or an --external one.')
        externals = []
        for item in parsed_args.external:
            name, sep, path = item.partition('=')
            if not sep or not name or not path:
                raise SystemExit('--external takes <name>=<kubeconfig-file>, not %r.' % item)
            with open(path) as handle:
                externals.append((name, handle.read()))
        federation = _federation(self, parsed_args.federation)
        url = '/v1/federations/%s' % federation['uuid']
        registered = []
        try:
            for name, kubeconfig in externals:
                registered.append(_request(self, 'POST', url + '/external_clusters', {
                    'name': name, 'kubeconfig': kubeconfig})['uuid'])
            updated = _request(self, 'PATCH', url, [
                {'op': 'add', 'path': '/member_ids/-', 'value': member}
                for member in list(parsed_args.clusters) + registered])
        except Exception:
            for uuid in registered:   # a refused join leaves nothing registered
                _request(self, 'DELETE', url + '/external_clusters/' + uuid)
            raise
        print('Request to join %s to federation %s accepted' % (', '.join(
            parsed_args.clusters + [name for name, _k in externals]), updated['uuid']))


class UnjoinFederation(_Membership):
    """Part clusters from a federation (an external cluster is forgotten once parted)."""

    clusters_nargs = '+'
    clusters_help = 'Cluster (name or UUID), or an external cluster\'s name'

    def take_action(self, parsed_args):
        federation = _federation(self, parsed_args.federation)
        members = federation['member_ids'] or []
        externals = None
        indexes = []
        for cluster in parsed_args.clusters:
            uuid = cluster if cluster in members else None
            if uuid is None:
                externals = externals or _externals(self, federation['uuid'])
                uuid = externals[cluster]['uuid'] if cluster in externals else \
                    _cluster_uuid(self, cluster)
            if uuid not in members:
                raise SystemExit('Cluster %s is not a member of federation %s.'
                                 % (cluster, federation['name']))
            indexes.append(members.index(uuid))
        patch = [{'op': 'remove', 'path': '/member_ids/%d' % index}
                 for index in sorted(set(indexes), reverse=True)]
        _request(self, 'PATCH', '/v1/federations/%s' % federation['uuid'], patch)
        print('Request to unjoin %s from federation %s accepted'
              % (', '.join(parsed_args.clusters), federation['uuid']))


class ListExternalClusters(command.Lister):
    """List a federation's external clusters (never their kubeconfigs)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _federation_argument(parser)
        return parser

    def take_action(self, parsed_args):
        federation = _federation(self, parsed_args.federation)
        columns = ('uuid', 'name', 'server', 'member')
        records = _request(self, 'GET', '/v1/federations/%s/external_clusters'
                           % federation['uuid'])['external_clusters']
        return columns, [(r['uuid'], r['name'], r['server'],
                          r['uuid'] in (federation['member_ids'] or [])) for r in records]


class DeleteFederation(command.Command):
    """Delete federations (their members are unjoined first)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('federations', metavar='<federation>', nargs='+',
                            help='Federation (name or UUID) to delete')
        return parser

    def take_action(self, parsed_args):
        for federation in parsed_args.federations:
            _request(self, 'DELETE', '/v1/federations/%s' % federation)
            print('Request to delete federation %s has been accepted.' % federation)
