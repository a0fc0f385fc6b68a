#!/usr/bin/env python3
"""A software WebAuthn authenticator and client made with Yubico's python-fido2 and cryptography, not
with Gatehouse, so the server's passkey checks are tested against an implementation of their own.

Reads a JSON object, or a list of them, from argv[1] (or stdin when argv[1] is "-") and prints the
answer, or the list of answers in order. Each object's "command":
  root    a new attestation root CA: {"cert_pem", "key_pem"}; kind "p256" (default) or "p384"
  create  a registration response. In: rp_id, origin, challenge (base64url), alg (-7 ES256, -257
          RS256, -8 EdDSA), fmt ("none", "packed-self", "packed", "apple"), root ({cert_pem,
          key_pem}, for "packed" and "apple"; made here when absent), uv, be, bs (flags, default
          uv true, be false, bs false), sign_count (0), aaguid (hex); tampering: type, hash_rp_id
          (hash another RP ID), cross_origin, leaf_ou, cert_aaguid (hex), nonce (hex, apple).
          Out: credential_id, private_key_pem, alg, response {clientDataJSON, attestationObject},
          root_pem, all base64url but the PEMs.
  get     an authentication response. In: rp_id, origin, challenge, credential_id, private_key_pem,
          alg, sign_count, uv (true), be, bs, user_handle (base64url, optional); tampering: type,
          hash_rp_id, cross_origin, up (true).
          Out: response {clientDataJSON, authenticatorData, signature, userHandle}.
"""
import base64, datetime, json, os, sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.x509.oid import NameOID
from fido2 import cbor
from fido2.cose import ES256, RS256, EdDSA
from fido2.webauthn import AttestationObject, AttestedCredentialData, AuthenticatorData


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sha256(data):
    digest = hashes.Hash(hashes.SHA256())
    digest.update(data)
    return digest.finalize()


def new_key(alg):
    if alg == -7:
        return ec.generate_private_key(ec.SECP256R1())
    if alg == -257:
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)
    if alg == -8:
        return ed25519.Ed25519PrivateKey.generate()
    raise SystemExit(f"unknown alg {alg}")


def sign(key, alg, message):
    if alg == -7:
        return key.sign(message, ec.ECDSA(hashes.SHA256()))
    if alg == -257:
        return key.sign(message, padding.PKCS1v15(), hashes.SHA256())
    return key.sign(message)


def pem(key):
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def client_data(spec, kind):
    data = {"type": spec.get("type", kind), "challenge": spec["challenge"], "origin": spec["origin"],
            "crossOrigin": spec.get("cross_origin", False)}
    return json.dumps(data, separators=(",", ":")).encode()


def flags(spec, extra):
    value = extra
    if spec.get("up", True):
        value |= AuthenticatorData.FLAG.UP
    if spec.get("uv", True):
        value |= AuthenticatorData.FLAG.UV
    if spec.get("be", False):
        value |= AuthenticatorData.FLAG.BE
    if spec.get("bs", False):
        value |= AuthenticatorData.FLAG.BS
    return AuthenticatorData.FLAG(value)


def make_root(kind="p256"):
    key = ec.generate_private_key(ec.SECP384R1() if kind == "p384" else ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Gatehouse Test Attestation Root"),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Gatehouse Tests")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA384() if kind == "p384" else hashes.SHA256()))
    return {"cert_pem": cert.public_bytes(serialization.Encoding.PEM).decode(), "key_pem": pem(key)}


def load_root(root):
    cert = x509.load_pem_x509_certificate(root["cert_pem"].encode())
    key = serialization.load_pem_private_key(root["key_pem"].encode(), password=None)
    return cert, key


def leaf(root, public_key, subject, extensions):
    root_cert, root_key = load_root(root)
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(root_cert.subject).public_key(public_key)
               .serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=3))
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
               .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(root_key.public_key()), critical=False))
    for oid, value in extensions:
        builder = builder.add_extension(x509.UnrecognizedExtension(x509.ObjectIdentifier(oid), value), critical=False)
    hash_algorithm = hashes.SHA384() if isinstance(root_key.curve, ec.SECP384R1) else hashes.SHA256()
    return builder.sign(root_key, hash_algorithm).public_bytes(serialization.Encoding.DER)


def create(spec):
    alg = spec.get("alg", -7)
    key = new_key(alg)
    credential_id = os.urandom(32)
    aaguid = bytes.fromhex(spec.get("aaguid", "00" * 16))
    cose = {-7: ES256, -257: RS256, -8: EdDSA}[alg].from_cryptography_key(key.public_key())
    credential = AttestedCredentialData.create(aaguid, credential_id, cose)
    rp_hash = sha256(spec.get("hash_rp_id", spec["rp_id"]).encode())
    auth_data = AuthenticatorData.create(rp_hash, flags(spec, AuthenticatorData.FLAG.AT), spec.get("sign_count", 0),
                                         credential)
    client = client_data(spec, "webauthn.create")
    signed = bytes(auth_data) + sha256(client)
    fmt = spec.get("fmt", "none")
    root = spec.get("root")
    if fmt in ("packed", "apple") and root is None:
        root = make_root()
    if fmt == "none":
        statement = {}
    elif fmt == "packed-self":
        statement = {"alg": alg, "sig": sign(key, alg, signed)}
    elif fmt == "packed":
        attestation_key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COUNTRY_NAME, "SE"),
                             x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Gatehouse Tests"),
                             x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME,
                                                spec.get("leaf_ou", "Authenticator Attestation")),
                             x509.NameAttribute(NameOID.COMMON_NAME, "Gatehouse Test Key")])
        cert_aaguid = bytes.fromhex(spec.get("cert_aaguid", aaguid.hex()))
        der = leaf(root, attestation_key.public_key(), subject,
                   [("1.3.6.1.4.1.45724.1.1.4", b"\x04\x10" + cert_aaguid)])
        statement = {"alg": -7, "sig": sign(attestation_key, -7, signed), "x5c": [der]}
    elif fmt == "apple":
        nonce = bytes.fromhex(spec["nonce"]) if "nonce" in spec else sha256(signed)
        value = b"\x30\x24\xa1\x22\x04\x20" + nonce
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Gatehouse Test Apple Credential")])
        der = leaf(root, key.public_key(), subject, [("1.2.840.113635.100.8.2", value)])
        statement = {"x5c": [der]}
    else:
        raise SystemExit(f"unknown fmt {fmt}")
    wire_fmt = "packed" if fmt.startswith("packed") else fmt
    attestation = AttestationObject.create(wire_fmt, auth_data, statement)
    return {"credential_id": b64(credential_id), "private_key_pem": pem(key), "alg": alg,
            "root_pem": root["cert_pem"] if root else None,
            "response": {"clientDataJSON": b64(client), "attestationObject": b64(bytes(attestation))}}


def get(spec):
    alg = spec.get("alg", -7)
    key = serialization.load_pem_private_key(spec["private_key_pem"].encode(), password=None)
    rp_hash = sha256(spec.get("hash_rp_id", spec["rp_id"]).encode())
    auth_data = AuthenticatorData.create(rp_hash, flags(spec, 0), spec.get("sign_count", 1))
    client = client_data(spec, "webauthn.get")
    signature = sign(key, alg, bytes(auth_data) + sha256(client))
    return {"response": {"clientDataJSON": b64(client), "authenticatorData": b64(bytes(auth_data)),
                         "signature": b64(signature), "userHandle": spec.get("user_handle")}}


def main():
    source = sys.stdin.read() if len(sys.argv) < 2 or sys.argv[1] == "-" else sys.argv[1]
    specs = json.loads(source)
    answers = [run(spec) for spec in (specs if isinstance(specs, list) else [specs])]
    print(json.dumps(answers if isinstance(specs, list) else answers[0]))


def run(spec):
    command = spec.get("command")
    if command == "root":
        return make_root(spec.get("kind", "p256"))
    if command == "create":
        return create(spec)
    if command == "get":
        return get(spec)
    raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    main()
