"""Keystone behind a counter, to see how often clients log in (tests and benchmarks)."""

import http.client
import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import yaml


class CountingProxy:
    """Keystone behind a counter: every request is passed on to ``target``; logins
    (POST .../auth/tokens) are counted, in all and by auth method (``methods``:
    'password', 'token', 'application_credential')."""

    def __init__(self, target):
        upstream, proxy = urlsplit(target), self
        self.logins, self.methods, lock = 0, Counter(), threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def forward(self):
                body = self.rfile.read(int(self.headers.get('Content-Length') or 0))
                if self.command == 'POST' and self.path.rstrip('/').endswith('/auth/tokens'):
                    with lock:
                        proxy.logins += 1
                        proxy.methods.update(_methods(body))
                conn = http.client.HTTPConnection(upstream.hostname, upstream.port, timeout=120)
                passed = {k: v for k, v in self.headers.items()
                          if k.lower() not in ('host', 'connection')}
                conn.request(self.command, self.path, body=body or None, headers=passed)
                answer = conn.getresponse()
                data = answer.read()
                self.send_response(answer.status)
                for key, value in answer.getheaders():
                    if key.lower() not in ('connection', 'transfer-encoding', 'content-length'):
                        self.send_header(key, value)
                self.send_header('Content-Length', str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                conn.close()

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = forward

            def log_message(self, *_args):
                pass

        self.httpd = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.url = 'http://127.0.0.1:%d' % self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def _methods(body):
    try:
        return json.loads(body)['auth']['identity']['methods']
    except (ValueError, KeyError, TypeError):
        return ['unknown']


def counted_clouds_yaml(clouds_yaml, cloud_name, dest):
    """A copy of ``cloud_name`` of ``clouds_yaml`` at ``dest`` (the only cloud there) whose
    logins go through a CountingProxy in front of its Keystone; returns the proxy."""
    with open(str(clouds_yaml)) as handle:
        cloud = yaml.safe_load(handle)['clouds'][cloud_name]
    keystone = urlsplit(cloud['auth']['auth_url'])
    proxy = CountingProxy('%s://%s' % (keystone.scheme, keystone.netloc))
    cloud['auth']['auth_url'] = proxy.url + keystone.path
    with open(str(dest), 'w') as handle:
        yaml.safe_dump({'clouds': {cloud_name: cloud}}, handle)
    return proxy
