#!/usr/bin/env python3
"""DPoP proofs (RFC 9449) made by PyJWT and cryptography, not by Gatehouse, for the tests to send.

Reads a JSON list of specs from argv[1] and prints a JSON list of {"proof", "jkt"}:
  key      path of a PEM private key; made on first use (kind: "ec" P-256, "rsa" 2048, "ed25519")
  alg      ES256 | RS256 | EdDSA, or "none" / "HS256" to make the forgeries the server must refuse
  htm, htu the request the proof is for; iat (default now), jti (default random)
  token    an access token whose SHA-256 goes in ath; nonce; typ (default dpop+jwt)
  tamper   change the claims after signing
  private  put the private key in the header's jwk; kind: a key type other than alg's (ed25519 only)
The thumbprint (RFC 7638) is computed here too, so the server's cnf.jkt is checked against it.
"""
import base64, hashlib, json, os, sys, time, uuid

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def load_key(path, kind):
    if os.path.exists(path):
        with open(path, "rb") as f:
            return serialization.load_pem_private_key(f.read(), password=None)
    key = {"ec": lambda: ec.generate_private_key(ec.SECP256R1()),
           "rsa": lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048),
           "ed25519": ed25519.Ed25519PrivateKey.generate}[kind]()
    with open(path, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return key


def public_jwk(key):
    if isinstance(key, ec.EllipticCurvePrivateKey):
        n = key.public_key().public_numbers()
        return {"kty": "EC", "crv": "P-256", "x": b64(n.x.to_bytes(32, "big")), "y": b64(n.y.to_bytes(32, "big"))}
    if isinstance(key, rsa.RSAPrivateKey):
        n = key.public_key().public_numbers()
        return {"kty": "RSA", "n": b64(n.n.to_bytes((n.n.bit_length() + 7) // 8, "big")), "e": b64(n.e.to_bytes(3, "big"))}
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return {"kty": "OKP", "crv": "Ed25519", "x": b64(raw)}


def thumbprint(jwk):
    members = {"EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n"), "OKP": ("crv", "kty", "x")}[jwk["kty"]]
    canonical = json.dumps({m: jwk[m] for m in members}, separators=(",", ":"), sort_keys=True)
    return b64(hashlib.sha256(canonical.encode()).digest())


def proof(spec):
    alg = spec.get("alg", "ES256")
    kind = spec.get("kind", {"RS256": "rsa", "EdDSA": "ed25519"}.get(alg, "ec"))
    key = load_key(spec["key"], kind)
    jwk = public_jwk(key)
    if spec.get("private") and isinstance(key, ec.EllipticCurvePrivateKey):
        jwk["d"] = b64(key.private_numbers().private_value.to_bytes(32, "big"))
    claims = {"jti": spec.get("jti") or str(uuid.uuid4()), "htm": spec["htm"], "htu": spec["htu"],
              "iat": spec.get("iat", int(time.time()))}
    if spec.get("token"):
        claims["ath"] = b64(hashlib.sha256(spec["token"].encode()).digest())
    if spec.get("nonce"):
        claims["nonce"] = spec["nonce"]
    headers = {"typ": spec.get("typ", "dpop+jwt"), "jwk": jwk}
    if alg == "none":
        header = dict(headers, alg="none")
        token = b64(json.dumps(header).encode()) + "." + b64(json.dumps(claims).encode()) + "."
    elif kind != {"RS256": "rsa", "EdDSA": "ed25519", "ES256": "ec"}.get(alg, kind):
        # A key of another type than alg names: signed by the key itself, so only the mismatch is wrong.
        header = dict(headers, alg=alg)
        signing_input = b64(json.dumps(header).encode()) + "." + b64(json.dumps(claims).encode())
        token = signing_input + "." + b64(key.sign(signing_input.encode()))
    elif alg == "HS256":
        # "Signed" with the public key's x, the classic confusion a verifier must never fall for.
        token = jwt.encode(claims, jwk.get("x", "secret").encode(), algorithm="HS256", headers=headers)
    else:
        token = jwt.encode(claims, key, algorithm=alg, headers=headers)
    if spec.get("tamper"):
        # The claims changed after signing (another htu's worth of bytes): the signature no longer holds.
        head, _, signature = token.split(".")
        claims["jti"] = claims["jti"] + "x"
        token = head + "." + b64(json.dumps(claims).encode()) + "." + signature
    return {"proof": token, "jkt": thumbprint(jwk)}


if __name__ == "__main__":
    print(json.dumps([proof(s) for s in json.loads(sys.argv[1])]))
