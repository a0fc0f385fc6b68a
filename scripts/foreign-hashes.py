#!/usr/bin/env python3
"""Password hashes made by the algorithms of the systems users move in from, for the import tests
(UserImportFormatTests): each by that system's own code or the library it uses, never by Gatehouse.

Usage: foreign-hashes.py PASSWORD  → one JSON object on standard output.
Needs: django, bcrypt, passlib, argon2-cffi (PyPI); hashlib for PBKDF2 and scrypt.
"""
import base64
import hashlib
import json
import os
import sys

import argon2
import bcrypt
import django
from django.conf import settings
from passlib.hash import scrypt as passlib_scrypt

password = sys.argv[1]
secret = password.encode()

settings.configure(PASSWORD_HASHERS=["django.contrib.auth.hashers.PBKDF2PasswordHasher"])
django.setup()
from django.contrib.auth.hashers import make_password  # noqa: E402 (needs settings first)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def keycloak_pbkdf2(name: str, iterations: int) -> dict:
    # Keycloak's Pbkdf2PasswordHashProvider: PBKDF2 with a 16-byte salt and a 512-bit key.
    salt = os.urandom(16)
    value = hashlib.pbkdf2_hmac(name, secret, salt, iterations, dklen=64)
    return {"value": b64(value), "salt": b64(salt), "iterations": iterations}


def keycloak_argon2() -> dict:
    # Keycloak 24+'s default: Argon2id, 7 MiB, 5 iterations, one lane, a 32-byte hash.
    salt = os.urandom(16)
    value = argon2.low_level.hash_secret_raw(secret, salt, time_cost=5, memory_cost=7168, parallelism=1, hash_len=32,
                                             type=argon2.low_level.Type.ID)
    return {"value": b64(value), "salt": b64(salt), "iterations": 5, "memory": 7168}


print(json.dumps({
    "django": make_password(password),
    "bcrypt_2b": bcrypt.hashpw(secret, bcrypt.gensalt(10)).decode(),
    "bcrypt_2a": bcrypt.hashpw(secret, bcrypt.gensalt(10, prefix=b"2a")).decode(),
    "keycloak_pbkdf2_sha256": keycloak_pbkdf2("sha256", 27500),
    "keycloak_pbkdf2_sha512": keycloak_pbkdf2("sha512", 210000),
    "keycloak_argon2": keycloak_argon2(),
    "scrypt": passlib_scrypt.hash(password),
    "argon2i": argon2.PasswordHasher(time_cost=2, memory_cost=19456, parallelism=1, type=argon2.Type.I).hash(password),
    "argon2d": argon2.PasswordHasher(time_cost=2, memory_cost=19456, parallelism=1, type=argon2.Type.D).hash(password),
}))
