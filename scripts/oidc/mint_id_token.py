#!/usr/bin/env python3
"""Gets a real ID token from a running oidc-provider-mock (PyPI) the way an app's provider SDK does:
sets the user's claims, walks the authorization-code flow with a nonce (the provider's own form,
answered for SUB), exchanges the code at the token endpoint, and prints the ID token (RS256, signed
with the provider's key, published at its /jwks).

    mint_id_token.py ISSUER CLIENT_ID SUB EMAIL EMAIL_VERIFIED(true|false) NONCE
"""
import sys
from urllib.parse import parse_qs, urlparse

import httpx


def main() -> int:
    issuer, client_id, sub, email, verified, nonce = sys.argv[1:7]
    redirect = "http://127.0.0.1/callback"
    with httpx.Client(base_url=issuer, follow_redirects=False, timeout=10) as client:
        claims = {"email": email, "email_verified": verified == "true", "given_name": "Ada", "family_name": "Lovelace"}
        client.put(f"/users/{sub}", json=claims).raise_for_status()
        params = {
            "client_id": client_id, "redirect_uri": redirect, "response_type": "code",
            "scope": "openid email profile", "nonce": nonce, "state": "state-1",
        }
        answer = client.post("/oauth2/authorize", params=params, data={"sub": sub})
        assert answer.status_code in (302, 303), f"authorize answered {answer.status_code}: {answer.text[:300]}"
        query = parse_qs(urlparse(answer.headers["location"]).query)
        assert query.get("state") == ["state-1"], query
        token = client.post("/oauth2/token", data={
            "grant_type": "authorization_code", "code": query["code"][0], "redirect_uri": redirect,
            "client_id": client_id, "client_secret": "any",
        })
        token.raise_for_status()
        print(token.json()["id_token"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
