# -*- coding: utf-8 -*-
# Copyright: openstack.magnum contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cluster CA: create it, sign CSRs with it, issue node certificates."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime
import ipaddress

try:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec, rsa
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    HAS_CRYPTOGRAPHY = True
except ImportError:  # pragma: no cover - reported by the callers
    HAS_CRYPTOGRAPHY = False

from ansible_collections.openstack.magnum.plugins.module_utils.core.errors import Invalid

CA_DAYS = 3650
CERT_DAYS = 1825
KEY_BITS = 2048


def _require():
    if not HAS_CRYPTOGRAPHY:
        raise Invalid("The cryptography library is required for cluster certificates.")


def _now():
    return datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=5)


def _key():
    return rsa.generate_private_key(public_exponent=65537, key_size=KEY_BITS)


def _pem_key(key):
    return key.private_bytes(serialization.Encoding.PEM,
                             serialization.PrivateFormat.TraditionalOpenSSL,
                             serialization.NoEncryption()).decode('ascii')


def _pem_cert(cert):
    return cert.public_bytes(serialization.Encoding.PEM).decode('ascii')


def create_ca(common_name):
    """A self-signed CA: returns (cert_pem, key_pem)."""
    _require()
    key = _key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name[:64])])
    cert = (x509.CertificateBuilder()
            .subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(_now())
            .not_valid_after(_now() + datetime.timedelta(days=CA_DAYS))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(True, False, False, False, False, True, True,
                                         False, False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                           critical=False)
            .sign(key, hashes.SHA256()))
    return _pem_cert(cert), _pem_key(key)


def _load_ca(ca_cert_pem, ca_key_pem):
    cert = x509.load_pem_x509_certificate(ca_cert_pem.encode('ascii'))
    try:
        # The CA's key is the store's own (made by create_ca, sealed at rest): OpenSSL's
        # check of an RSA key's consistency costs ~40 ms a load, for every certificate.
        key = serialization.load_pem_private_key(ca_key_pem.encode('ascii'), password=None,
                                                 unsafe_skip_rsa_key_validation=True)
    except TypeError:  # cryptography before 39 checks it always
        key = serialization.load_pem_private_key(ca_key_pem.encode('ascii'), password=None)
    return cert, key


def _issue(ca_cert_pem, ca_key_pem, subject, public_key, usages, sans=None,
           days=CERT_DAYS, hours=None):
    ca_cert, ca_key = _load_ca(ca_cert_pem, ca_key_pem)
    builder = (x509.CertificateBuilder()
               .subject_name(subject).issuer_name(ca_cert.subject)
               .public_key(public_key).serial_number(x509.random_serial_number())
               .not_valid_before(_now())
               .not_valid_after(_now() + (datetime.timedelta(hours=hours) if hours
                                          else datetime.timedelta(days=days)))
               .add_extension(x509.BasicConstraints(ca=False, path_length=None),
                              critical=True)
               .add_extension(x509.KeyUsage(True, False, True, False, False, False, False,
                                            False, False), critical=True)
               .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
               .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                   ca_key.public_key()), critical=False))
    if sans:
        names = []
        for san in sans:
            try:
                names.append(x509.IPAddress(ipaddress.ip_address(san)))
            except ValueError:
                names.append(x509.DNSName(san))
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return _pem_cert(builder.sign(ca_key, hashes.SHA256()))


def sign_csr(ca_cert_pem, ca_key_pem, csr_pem):
    """Sign a client CSR (Magnum's ``ca sign``): keeps the CSR's subject."""
    _require()
    try:
        csr = x509.load_pem_x509_csr(csr_pem.encode('ascii') if hasattr(csr_pem, 'encode')
                                     else csr_pem)
    except (ValueError, TypeError) as exc:
        raise Invalid("Invalid CSR: %s" % exc)
    if not csr.is_signature_valid:
        raise Invalid("Invalid CSR: its signature does not verify.")
    return _issue(ca_cert_pem, ca_key_pem, csr.subject, csr.public_key(),
                  [ExtendedKeyUsageOID.CLIENT_AUTH])


def issue_keypair(ca_cert_pem, ca_key_pem, common_name, organization=None, sans=None,
                  server=True, client=True):
    """A new key and certificate for a node or a client: (cert_pem, key_pem)."""
    _require()
    key = _key()
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, common_name[:64])]
    if organization:
        attrs.insert(0, x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    usages = ([ExtendedKeyUsageOID.SERVER_AUTH] if server else []) + \
        ([ExtendedKeyUsageOID.CLIENT_AUTH] if client else [])
    cert = _issue(ca_cert_pem, ca_key_pem, x509.Name(attrs), key.public_key(), usages, sans)
    return cert, _pem_key(key)


def issue_client(ca_cert_pem, ca_key_pem, common_name, organization=None, hours=48):
    """A short-lived client certificate on a new EC (P-256) key - a fraction of a
    millisecond to make where an RSA key takes tens: (cert_pem, key_pem)."""
    _require()
    key = ec.generate_private_key(ec.SECP256R1())
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, common_name[:64])]
    if organization:
        attrs.insert(0, x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    cert = _issue(ca_cert_pem, ca_key_pem, x509.Name(attrs), key.public_key(),
                  [ExtendedKeyUsageOID.CLIENT_AUTH], hours=hours)
    return cert, _pem_key(key)


def make_csr(common_name, organization=None):
    """A key and CSR, as a client would make them: (csr_pem, key_pem)."""
    _require()
    key = _key()
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    if organization:
        attrs.insert(0, x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    csr = x509.CertificateSigningRequestBuilder().subject_name(x509.Name(attrs)).sign(
        key, hashes.SHA256())
    return csr.public_bytes(serialization.Encoding.PEM).decode('ascii'), _pem_key(key)


def verify_signed_by(cert_pem, ca_cert_pem):
    """True when ``cert_pem`` was issued by the CA in ``ca_cert_pem``."""
    _require()
    cert = x509.load_pem_x509_certificate(cert_pem.encode('ascii'))
    ca = x509.load_pem_x509_certificate(ca_cert_pem.encode('ascii'))
    try:
        cert.verify_directly_issued_by(ca)
        return True
    except (ValueError, TypeError, Exception):
        return False


def sans(cert_pem):
    """The names and addresses (as text) a certificate is for."""
    _require()
    cert = x509.load_pem_x509_certificate(cert_pem.encode('ascii'))
    try:
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return []
    return [str(name.value) for name in names]
