"""Who may talk to a listener: the rules for a public TCP port and for a token.

A public listener is a TCP port that a web browser on the same machine can reach. A
page the browser shows may make it send requests there (a form post, fetch in no-cors
mode, a DNS-rebound host name), so a public listener refuses what only a browser sends,
while OSWorld's own client (python `requests`: no Origin header, JSON bodies, a form
for /file and /window_size, multipart for /setup/upload) keeps working:

- an `Origin` header, or `Sec-Fetch-Site` / `Sec-Fetch-Mode` other than `same-origin`
  or `none`: 403;
- a Host header that names a DNS name other than `localhost` (DNS rebinding): 403;
  IP literals and `localhost`, with or without a port, are fine;
- a non-empty body whose Content-Type the endpoint does not take: 415. Endpoints take
  JSON unless they say otherwise; a `text/plain` body, which a cross-site form may send
  without a CORS preflight, never reaches a handler.

A token, when set, is required on every request of that listener (public or not):
`Authorization: Bearer <token>` or `X-OSWorld-Token: <token>`, else 401.

Standard library only: the env server runs on the desktop's system Python.
"""
from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field

# Media types by the names routes use to declare what their body may be.
ENCODINGS = {
    "json": "application/json",
    "form": "application/x-www-form-urlencoded",
    "multipart": "multipart/form-data",
}
SAFE_FETCH_SITES = frozenset({"same-origin", "none"})


@dataclass(frozen=True)
class Refusal:
    status: int
    message: str
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class AccessPolicy:
    public: bool = False
    token: str | None = None

    def check_headers(self, headers: Mapping[str, str]) -> Refusal | None:
        """Checks that need no route: browser origin, Host, token. `headers` keys are lower case."""
        if self.public:
            refusal = _cross_site(headers) or _rebound_host(headers.get("host"))
            if refusal:
                return refusal
        if self.token is not None and not _has_token(headers, self.token):
            return Refusal(401, "this server needs 'Authorization: Bearer <token>' (or 'X-OSWorld-Token: <token>')",
                           {"WWW-Authenticate": 'Bearer realm="osworld"'})
        return None

    def shows_token(self, headers: Mapping[str, str]) -> bool:
        """Whether the request carries this listener's token (False when it needs none)."""
        return self.token is not None and _has_token(headers, self.token)

    def check_body(self, headers: Mapping[str, str], has_body: bool, accepts: frozenset[str]) -> Refusal | None:
        """On a public listener, a body must be in an encoding the endpoint takes."""
        if not self.public or not has_body:
            return None
        media_type = media_type_of(headers.get("content-type", ""))
        allowed = sorted(ENCODINGS[name] for name in accepts)
        if media_type not in allowed:
            return Refusal(415, f"Content-Type {media_type or '(none)'!r} is not accepted here; "
                                f"send {' or '.join(allowed)}")
        return None


def media_type_of(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def _cross_site(headers: Mapping[str, str]) -> Refusal | None:
    if "origin" in headers:
        return Refusal(403, f"requests from web pages are refused (Origin: {headers['origin']!r:.100})")
    for name in ("sec-fetch-site", "sec-fetch-mode"):
        value = headers.get(name)
        if value is not None and value.strip().lower() not in SAFE_FETCH_SITES:
            return Refusal(403, f"requests from web pages are refused ({name}: {value!r:.100})")
    return None


def _rebound_host(host: str | None) -> Refusal | None:
    if host is None or is_local_host_header(host):
        return None
    return Refusal(403, f"Host {host!r:.100} is refused: use an IP address or localhost")


def is_local_host_header(host: str) -> bool:
    """An IP literal or `localhost`, with or without a port (`[::1]:5000`, `127.0.0.1`, `localhost:80`)."""
    host = host.strip()
    if host.startswith("["):
        name, bracket, rest = host[1:].partition("]")
        if not bracket or (rest and not (rest.startswith(":") and rest[1:].isdigit())):
            return False
        candidates = [name]
    else:
        name, colon, port = host.rpartition(":")
        if colon and port.isdigit() and ":" not in name:
            candidates = [name]
        else:
            candidates = [host]  # no port, or a bare IPv6 address
    for candidate in candidates:
        if candidate.lower() == "localhost":
            return True
        try:
            ipaddress.ip_address(candidate)
        except ValueError:
            return False
        return True
    return False


def _has_token(headers: Mapping[str, str], token: str) -> bool:
    offered = headers.get("x-osworld-token")
    if offered is None:
        scheme, _, credentials = headers.get("authorization", "").strip().partition(" ")
        if scheme.lower() != "bearer":
            return False
        offered = credentials.strip()
    return hmac.compare_digest(offered.encode("utf-8", "surrogateescape"), token.encode("utf-8", "surrogateescape"))


def is_loopback(host: str) -> bool:
    """Whether a listening address stays on this machine: `localhost` or a loopback IP
    (bracketed IPv6 too). A host name is not: it may resolve to anything."""
    host = host.strip("[]")
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
