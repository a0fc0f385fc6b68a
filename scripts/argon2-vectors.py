#!/usr/bin/env python3
"""Generate Tests/Argon2Tests/Fixtures/argon2id-vectors.json.

The fixture is a differential test for the pure-Swift Argon2 module: every
case here is computed by argon2-cffi (i.e. the reference C implementation),
and Argon2Tests recomputes each one in Swift and compares. argon2-cffi is only
needed to *regenerate* the fixture; it is never a build or test dependency.

    pip install argon2-cffi
    python3 scripts/argon2-vectors.py            # rewrites the fixture

The RNG is seeded, so rerunning with the same argon2-cffi gives the same file
(except the PHC strings, whose salts come from the OS RNG inside
PasswordHasher; a fixed salt is passed where that matters).

Costs are kept small (m <= 256 KiB for all but a few cases) because the Swift
tests also run in unoptimised debug builds (the whole suite takes ~2 s there).
"""

import json
import random
from pathlib import Path

from argon2 import PasswordHasher, Type
from argon2.low_level import ARGON2_VERSION, core, ffi, hash_secret_raw, lib

SEED = 9106  # the RFC number; any fixed value works
OUT = Path(__file__).resolve().parent.parent / "Tests/Argon2Tests/Fixtures/argon2id-vectors.json"

# Characters for non-ASCII passwords: 1-, 2-, 3- and 4-byte UTF-8 sequences.
UNICODE_POOL = "aZ9 !~éßøΩжあ日本語한€\u00a0🔑😀🇩🇪"


def buf(data: bytes):
    """A C buffer for argon2_context; NULL for empty input (libargon2 requires
    ptr == NULL or len > 0 to be consistent, NULL/0 is always accepted)."""
    return ffi.new("uint8_t[]", data) if data else ffi.NULL


def argon2id(password, salt, t, m, p, tag_len, secret=b"", ad=b""):
    """Raw Argon2id via argon2_ctx, which (unlike hash_secret_raw) exposes the
    optional secret K and associated data X."""
    out = ffi.new("uint8_t[]", tag_len)
    keep = [buf(password), buf(salt), buf(secret), buf(ad)]  # keep alive during the call
    ctx = ffi.new(
        "argon2_context *",
        dict(
            version=ARGON2_VERSION,
            out=out,
            outlen=tag_len,
            pwd=keep[0],
            pwdlen=len(password),
            salt=keep[1],
            saltlen=len(salt),
            secret=keep[2],
            secretlen=len(secret),
            ad=keep[3],
            adlen=len(ad),
            t_cost=t,
            m_cost=m,
            lanes=p,
            threads=p,
            allocate_cbk=ffi.NULL,
            free_cbk=ffi.NULL,
            flags=lib.ARGON2_DEFAULT_FLAGS,
        ),
    )
    rv = core(ctx, Type.ID.value)
    if rv != lib.ARGON2_OK:
        raise RuntimeError(f"argon2_ctx failed: {rv}")
    tag = bytes(ffi.buffer(out, tag_len))
    if not secret and not ad:
        # Cross-check the context path against the plain high-level binding.
        assert tag == hash_secret_raw(password, salt, t, m, p, tag_len, Type.ID)
    return tag


def random_password(rng: random.Random) -> bytes:
    if rng.random() < 0.4:
        text = "".join(rng.choice(UNICODE_POOL) for _ in range(rng.randint(1, 20)))
        data = text.encode("utf-8")
        while len(data) > 64:  # stay within 0...64 bytes, on a character boundary
            text = text[:-1]
            data = text.encode("utf-8")
        return data
    return rng.randbytes(rng.randint(0, 64))


def case(rng, *, m=None, t=None, p=None, tag_len=None, extras=None):
    p = p if p is not None else rng.randint(1, 4)
    # Mostly small memory; deliberately includes the minimum 8p and values
    # that are not multiples of 4p (the algorithm rounds m down).
    if m is None:
        m = 8 * p if rng.random() < 0.1 else rng.randint(8 * p, 256)
    t = t if t is not None else rng.randint(1, 4)
    tag_len = tag_len if tag_len is not None else rng.randint(4, 64)
    password = random_password(rng)
    salt = rng.randbytes(rng.randint(8, 32))
    with_extras = extras if extras is not None else rng.random() < 0.3
    secret = rng.randbytes(rng.randint(0, 32)) if with_extras else b""
    ad = rng.randbytes(rng.randint(0, 32)) if with_extras else b""
    tag = argon2id(password, salt, t, m, p, tag_len, secret, ad)
    return {
        "password": password.hex(),
        "salt": salt.hex(),
        "secret": secret.hex(),
        "associatedData": ad.hex(),
        "memoryKiB": m,
        "iterations": t,
        "parallelism": p,
        "tagLength": tag_len,
        "tag": tag.hex(),
    }


def main():
    rng = random.Random(SEED)

    # The RFC 9106 section 5.3 vector, to prove the generator itself is sound.
    rfc = argon2id(b"\x01" * 32, b"\x02" * 16, 3, 32, 4, 32, b"\x03" * 8, b"\x04" * 12)
    assert rfc.hex() == "0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659"

    raw = [case(rng) for _ in range(256)]
    # Tags longer than 64 bytes exercise H''s chained mode (also used for the
    # 1 KiB initial blocks, but only here for the final tag).
    raw += [case(rng, tag_len=n) for n in (65, 96, 97, 128, 200)]
    # A few larger memories: multiple address blocks per segment (> 128
    # blocks per segment), and cross-lane references over bigger areas.
    raw += [
        case(rng, m=1024, t=1, p=1),
        case(rng, m=2048, t=2, p=1, tag_len=32),
        case(rng, m=2000, t=1, p=3, extras=True),
        case(rng, m=1536, t=1, p=4),
    ]

    # PHC strings as a Python server would store them: argon2-cffi's default
    # profile (RFC 9106 low-memory: m=64 MiB, t=3, p=4), OWASP's minimum,
    # and a cheap one with a non-ASCII password.
    phc = []
    for label, hasher, password in [
        ("argon2-cffi default", PasswordHasher(), "correct horse battery staple"),
        ("owasp", PasswordHasher(time_cost=2, memory_cost=19456, parallelism=1), "hunter2"),
        ("cheap, non-ASCII", PasswordHasher(time_cost=1, memory_cost=64, parallelism=2), "pässwörd 🔑"),
        ("cheap, long salt/hash", PasswordHasher(time_cost=2, memory_cost=128, parallelism=1,
                                                 hash_len=48, salt_len=24), ""),
    ]:
        encoded = hasher.hash(password)
        assert hasher.verify(encoded, password)
        phc.append({"label": label, "password": password, "phc": encoded})

    fixture = {
        "generator": "scripts/argon2-vectors.py",
        "reference": f"argon2-cffi {argon2_version()}",
        "seed": SEED,
        "raw": raw,
        "phc": phc,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(raw)} raw cases and {len(phc)} PHC strings to {OUT}")


def argon2_version() -> str:
    from importlib.metadata import version

    return version("argon2-cffi")


if __name__ == "__main__":
    main()
