#!/usr/bin/env python3
"""A real SMTP server for GatehouseSMTP's tests, built on aiosmtpd.

It listens on 127.0.0.1, accepts every message (recipients whose local part starts with
"reject-temp" get 451 and other "reject…" ones 550), and writes each one to --maildir as JSON: the
envelope, whether the session was encrypted and authenticated, the raw data, and the message as
Python's email package parses it (decoded subject and names, each part's decoded body, defects),
so tests check the client against an independent MIME implementation.

Once listening it prints one line to stdout and flushes it:

    SMTP-SINK READY 127.0.0.1 <port>

It runs until SIGTERM/SIGINT, or with --exit-on-stdin-eof also until stdin closes, so it cannot
outlive a test runner that died without cleaning up.

Usage:
    smtp-sink.py [--port N] [--maildir DIR] [--tls-cert PEM --tls-key PEM [--implicit-tls]]
                 [--require-starttls] [--auth USER:PASS [--auth-mechanisms PLAIN,LOGIN]
                 [--auth-allow-plaintext]] [--stall] [--exit-on-stdin-eof]
    smtp-sink.py --make-cert DIR     # write DIR/cert.pem and DIR/key.pem (self-signed,
                                     # CN=localhost, SAN localhost and 127.0.0.1), then exit

Needs `pip install aiosmtpd`; --make-cert uses the `cryptography` package, or the openssl
command when that is missing.
"""

import argparse
import asyncio
import datetime
import email
import email.policy
import ipaddress
import itertools
import json
import os
import signal
import ssl
import subprocess
import sys


def make_cert(directory):
    os.makedirs(directory, exist_ok=True)
    cert_path = os.path.join(directory, "cert.pem")
    key_path = os.path.join(directory, "key.pem")
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
    except ImportError:
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-nodes", "-subj", "/CN=localhost", "-days", "1",
             "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
             "-keyout", key_path, "-out", cert_path],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return cert_path, key_path

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([
            x509.DNSName("localhost"),
            x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
        ]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    with open(key_path, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    with open(cert_path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    return cert_path, key_path


def describe(raw):
    """What the email package makes of the message, for assertions in Swift."""
    message = email.message_from_bytes(raw, policy=email.policy.default)
    defects = [type(d).__name__ for d in message.defects]
    parts = []
    for part in message.walk():
        defects += [type(d).__name__ for d in part.defects]
        if part.is_multipart():
            continue
        parts.append({
            "content_type": part.get_content_type(),
            "charset": part.get_content_charset(),
            "transfer_encoding": part.get("Content-Transfer-Encoding"),
            "content": part.get_content(),
        })
    sender = message["From"]
    recipients = message["To"]
    return {
        "subject": str(message["Subject"]),
        "from_name": sender.addresses[0].display_name if sender else None,
        "from_address": sender.addresses[0].addr_spec if sender else None,
        "to": [{"name": a.display_name, "address": a.addr_spec} for a in recipients.addresses] if recipients else [],
        "message_id": message["Message-ID"],
        "date": message["Date"],
        "mime_version": message["MIME-Version"],
        "content_type": message.get_content_type(),
        "headers": [[k, str(v)] for k, v in message.items()],
        "parts": parts,
        "defects": defects,
    }


class Recorder:
    def __init__(self, maildir):
        self.maildir = maildir
        self.counter = itertools.count(1)

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        # Recipients whose local part starts with "reject" are refused, for the client's error paths.
        local = address.split("@")[0].lower()
        if local.startswith("reject-temp"):
            return "451 4.3.0 Mailbox temporarily unavailable"
        if local.startswith("reject"):
            return "550 5.1.1 No such user"
        envelope.rcpt_tos.append(address)
        return "250 2.1.5 OK"

    async def handle_DATA(self, server, session, envelope):
        if self.maildir:
            raw = envelope.original_content or b""
            lines = raw.split(b"\r\n")
            record = {
                "mail_from": envelope.mail_from,
                "rcpt_tos": envelope.rcpt_tos,
                "tls": session.ssl is not None or server.transport.get_extra_info("ssl_object") is not None,
                "authenticated_as": (session.auth_data.login.decode("utf-8", "replace")
                                     if session.authenticated and session.auth_data else None),
                "raw": raw.decode("utf-8", "replace"),
                "max_line_length": max((len(line) for line in lines), default=0),
                "bare_line_feeds": raw.replace(b"\r\n", b"").count(b"\n"),
                "eight_bit": any(byte > 127 for byte in raw),
                "parsed": describe(raw),
            }
            path = os.path.join(self.maildir, "%04d.json" % next(self.counter))
            with open(path + ".tmp", "w", encoding="utf-8") as f:
                json.dump(record, f, ensure_ascii=False, indent=1)
            # Atomic: a test that sees the file sees all of it.
            os.replace(path + ".tmp", path)
        return "250 2.0.0 Message accepted for delivery"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1; 0 picks a free one")
    parser.add_argument("--maildir", help="directory for one JSON file per received message")
    parser.add_argument("--tls-cert", help="PEM certificate; enables STARTTLS (or implicit TLS)")
    parser.add_argument("--tls-key", help="PEM private key for --tls-cert")
    parser.add_argument("--implicit-tls", action="store_true", help="TLS from the first byte (smtps)")
    parser.add_argument("--require-starttls", action="store_true", help="refuse mail until STARTTLS")
    parser.add_argument("--auth", help="USER:PASS; authentication is then required")
    parser.add_argument("--auth-mechanisms", default="PLAIN,LOGIN", help="mechanisms to offer")
    parser.add_argument("--auth-allow-plaintext", action="store_true", help="offer AUTH without TLS")
    parser.add_argument("--stall", action="store_true", help="accept connections and never answer")
    parser.add_argument("--exit-on-stdin-eof", action="store_true",
                        help="also stop when stdin closes (tests hold a pipe open)")
    parser.add_argument("--make-cert", metavar="DIR", help="write a self-signed cert.pem/key.pem and exit")
    args = parser.parse_args()

    if args.make_cert:
        cert, key = make_cert(args.make_cert)
        print(cert)
        print(key)
        return
    if bool(args.tls_cert) != bool(args.tls_key):
        parser.error("--tls-cert and --tls-key go together")
    if args.implicit_tls and not args.tls_cert:
        parser.error("--implicit-tls needs --tls-cert and --tls-key")
    asyncio.run(serve(args))


async def serve(args):
    from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)

    tls_context = None
    if args.tls_cert:
        tls_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        tls_context.load_cert_chain(args.tls_cert, args.tls_key)

    if args.stall:
        async def silent(reader, writer):
            await stop.wait()
            writer.close()
        server = await asyncio.start_server(silent, "127.0.0.1", args.port)
    else:
        handler = Recorder(args.maildir)
        smtp_kwargs = {"hostname": "smtp-sink.test", "ident": "smtp-sink", "timeout": 30}
        if args.auth:
            user, _, password = args.auth.partition(":")

            def authenticator(server, session, envelope, mechanism, auth_data):
                ok = (isinstance(auth_data, LoginPassword)
                      and auth_data.login == user.encode() and auth_data.password == password.encode())
                # handled=False: aiosmtpd itself then answers 535 on failure.
                return AuthResult(success=ok, handled=False, auth_data=auth_data if ok else None)

            offered = {m.strip().upper() for m in args.auth_mechanisms.split(",") if m.strip()}
            smtp_kwargs.update(
                authenticator=authenticator,
                auth_required=True,
                auth_require_tls=not args.auth_allow_plaintext,
                auth_exclude_mechanism=[m for m in ("PLAIN", "LOGIN") if m not in offered],
            )
        if tls_context and not args.implicit_tls:
            smtp_kwargs.update(tls_context=tls_context, require_starttls=args.require_starttls)

        def factory():
            return SMTP(handler, **smtp_kwargs)

        server = await loop.create_server(
            factory, "127.0.0.1", args.port, ssl=tls_context if args.implicit_tls else None)

    port = server.sockets[0].getsockname()[1]
    print("SMTP-SINK READY 127.0.0.1 %d" % port, flush=True)

    # Stop when stdin closes too, so a crashed test runner does not leave servers behind.
    if args.exit_on_stdin_eof:
        def stdin_closed():
            if not sys.stdin.buffer.read1(4096):
                loop.remove_reader(sys.stdin.fileno())
                stop.set()
        try:
            loop.add_reader(sys.stdin.fileno(), stdin_closed)
        except (OSError, ValueError, NotImplementedError):
            pass

    async with server:
        await stop.wait()


if __name__ == "__main__":
    main()
