"""Beside the flows (secrets): the one redaction of credentials for everything tuner prints, logs, stores or exports.

A URL carries credentials in its userinfo (``postgresql://user:secret@host/db``; in a web URL the user name alone
may be the token, ``https://sk-abc@host/v1``) or in its query string
(``?password=…``, ``sslpassword=…``, ``token=…``, ``api_key=…``, ``access_token=…``, ``sig=…``); error messages
and libpq connection strings carry them as ``password=…`` pairs. :func:`redact` replaces every such value by
``***`` in any text, URL or not; :func:`redact_data` does the same through JSON-like data, where a value
under a secret-looking key (``Authorization``, ``api_key``) is replaced whole.

>>> redact("postgresql://tuner:pw@db:5432/test?sslmode=require&sslpassword=s3")
'postgresql://tuner:***@db:5432/test?sslmode=require&sslpassword=***'
"""

from __future__ import annotations

import re
from typing import Any

MASK = "***"
# a word of a parameter name (split at _ - . and case changes) that names a credential
_SECRET_WORDS = frozenset(
    {"pass", "passwd", "password", "pwd", "secret", "token", "key", "apikey", "auth", "authorization",
     "credential", "credentials", "signature", "sig", "session", "sessionid", "cookie", "bearer"}
)
# the last word of a name that points at a secret instead of holding it
_POINTER_WORDS = frozenset({"env", "file", "path", "var"})
# scheme://user:PASSWORD@host: the password runs to the '@' after which the host part has no further '@'
_USERINFO = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://[^:/@?#\s]*):\S*?@(?=[^@\s/?#]*(?:[/?#\s\"'<>]|$))")
# http(s)/ws(s)://TOKEN@host: in a web URL a user name without a password is a token (basic auth with a key as
# the user); a database URL's lone user name is who connects, not a secret, and stays
_WEB_USER = re.compile(r"(?P<head>(?:https?|wss?)://)[^:/@?#\s]+@(?=[^@\s/?#]*(?:[/?#\s\"'<>]|$))", re.IGNORECASE)
# NAME=VALUE in a query string, a libpq connection string or a message
_PAIR = re.compile(r"(?P<name>[A-Za-z][A-Za-z0-9_.\-]*)=(?P<value>[^&;#\s\"'<>]*)")


def is_secret_name(name: str) -> bool:
    """True for a parameter, header or field name that holds a credential: ``password``, ``sslpassword``,
    ``api_key``, ``X-Api-Key``, ``access_token``, ``Authorization``, ``client_secret``; not ``max_tokens``.

    The name is split into words at ``_``, ``-``, ``.`` and lower-to-upper case changes; it is secret when a
    word is one of the credential words, or contains ``password``/``secret``, or ends in ``token``/``apikey``;
    a name ending in ``env``, ``file`` or ``path`` (``api_key_env``, ``password_file``) names where a secret is
    kept, not the secret, and stays."""
    words = [w.lower() for w in re.split(r"[_\-.]|(?<=[a-z])(?=[A-Z])", name) if w]
    if words and words[-1] in _POINTER_WORDS:
        return False
    return any(w in _SECRET_WORDS or "password" in w or "secret" in w or w.endswith(("token", "apikey")) for w in words)


def redact(text: str) -> str:
    """``text`` with the password of every URL userinfo, the lone user name of a web URL and the value of every
    secret ``NAME=VALUE`` pair (see :func:`is_secret_name`) replaced by ``***``; everything else is unchanged.

    >>> redact("https://sk-abc@llm.example.com/v1 and postgresql://tuner@db/test")
    'https://***@llm.example.com/v1 and postgresql://tuner@db/test'
    """
    text = _USERINFO.sub(lambda m: f"{m['head']}:{MASK}@", text)
    text = _WEB_USER.sub(lambda m: f"{m['head']}{MASK}@", text)
    return _PAIR.sub(lambda m: f"{m['name']}={MASK}" if is_secret_name(m["name"]) and m["value"] else m[0], text)


def redact_data(data: Any) -> Any:
    """JSON-like ``data`` with every string :func:`redact`-ed and every value under a secret key replaced by
    ``***`` (mappings and lists are copied; other values are returned as they are)."""
    if isinstance(data, dict):
        return {key: MASK if isinstance(key, str) and is_secret_name(key) else redact_data(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [redact_data(item) for item in data]
    return redact(data) if isinstance(data, str) else data
