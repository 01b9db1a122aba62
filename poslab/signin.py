"""Roster sign-in: the link's address, the browser's cookie, the links' CSV, and who the client is
behind a reverse proxy.

A student's personal link is ``<app>/signin/<token>``. The app's route (``app_pages/runtime/server.py``)
checks the token in the store, sets the cookie (HttpOnly, SameSite=Lax, a random session id whose
digest and expiry are in the store) and redirects to the app, so the token leaves the address bar.
The cookie is ``COOKIE`` over HTTP, ``SECURE_COOKIE`` (``__Host-``: Secure, for this host only)
under HTTPS (``cookie_name``). A refused link redirects to ``/?signin=<why>``: ``REFUSALS`` says it.

SameSite=Lax does not stop a page on the same host but another port (the same *site*) from opening
the app's websocket with the cookie. So the cookie counts only on a request whose ``Origin`` is the
app's own (``same_origin``): scheme, host and port as the request was addressed (``Host``, and the
server's scheme), or, from a trusted proxy, as it forwards them (``X-Forwarded-Proto``/``-Host``).
A request without ``Origin`` is not a browser's (browsers send it on every websocket and POST).

Behind a reverse proxy every connection comes from the proxy. ``client_address`` believes
``X-Forwarded-For`` only from a proxy listed in ``POSLAB_TRUSTED_PROXIES`` (addresses or networks,
comma-separated): it walks the header from the right and takes the first address that is not a
trusted proxy. From anyone else the header is ignored: a client could write anything in it.
Addresses are compared as IP addresses, an IPv4-mapped IPv6 one (``::ffff:127.0.0.1``, how a
dual-stack server sees an IPv4 peer) as its IPv4 address (``normal_address``).
"""

from __future__ import annotations

import csv
import io
import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:  # the store imports poslab.config, which reads POSLAB_TRUSTED_PROXIES with this module
    from poslab.store import LinkRefusal, RosterMember

COOKIE = "poslab_signin"
SECURE_COOKIE = f"__Host-{COOKIE}"  # under HTTPS: Secure, Path=/, no Domain (the browser enforces all three)
DEFAULT_PORTS = {"http": 80, "https": 443}
ROUTE = "signin"  # the link's path: /signin/<token>
STATUS_PARAM = "signin"  # ?signin=<refusal> after a link that signed nobody in
LOOPBACK = "127.0.0.1"  # Streamlit reports both loopback addresses as "no address"

REFUSALS: dict[LinkRefusal, str] = {
    "unknown": "That sign-in link is not valid (perhaps it was copied only in part). Open the whole link "
    "from your instructor's message, or ask them for a new one.",
    "expired": "That sign-in link has expired. Ask your instructor for a new one.",
    "revoked": "That sign-in link was withdrawn (a newer one may have been sent to you). Use the newest link "
    "from your instructor, or ask them for a new one.",
    "not_rostered": "That sign-in link is for a student who is not on this class's roster any more. Ask your "
    "instructor.",
}
LINKS_CSV_COLUMNS = ("name", "email", "id", "section", "key", "link", "expires_utc")

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def link_url(app_url: str, token: str) -> str:
    return f"{app_url.rstrip('/')}/{ROUTE}/{token}"


def links_csv(members: Iterable[RosterMember], tokens: Mapping[str, str], app_url: str, expires: datetime) -> str:
    """One row per student given a new link: what the instructor sends out (a mail merge)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(LINKS_CSV_COLUMNS)
    for member in members:
        if member.key in tokens:
            writer.writerow(
                [
                    member.name,
                    member.email,
                    member.lms_id,
                    member.section,
                    member.key,
                    link_url(app_url, tokens[member.key]),
                    f"{expires:%Y-%m-%d %H:%M}",
                ]
            )
    return out.getvalue()


def parse_trusted_proxies(text: str | None) -> tuple[Network, ...]:
    """``POSLAB_TRUSTED_PROXIES``: '127.0.0.1, 172.16.0.0/12'; ValueError names the entry it cannot read."""
    networks = []
    for entry in (text or "").replace(";", ",").split(","):
        entry = entry.strip()
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            raise ValueError(
                f"POSLAB_TRUSTED_PROXIES: {entry!r} is not an IP address or network (e.g. 127.0.0.1 or 172.16.0.0/12)"
            ) from None
    return tuple(networks)


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = text.strip().strip("[]")
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    mapped = getattr(address, "ipv4_mapped", None)
    return mapped if mapped is not None else address


def normal_address(text: str) -> str:
    """An address as it is compared and kept: ``::ffff:127.0.0.1`` is ``127.0.0.1``; not an address: as given."""
    address = _address(text)
    return str(address) if address is not None else text.strip()


def _trusted(address: ipaddress.IPv4Address | ipaddress.IPv6Address | None, trusted: Sequence[Network]) -> bool:
    return address is not None and any(address.version == network.version and address in network for network in trusted)


def from_trusted_proxy(peer: str | None, trusted: Sequence[Network]) -> bool:
    return _trusted(_address(peer or LOOPBACK), trusted)


def client_address(peer: str | None, forwarded_for: Sequence[str], trusted: Sequence[Network]) -> str:
    """The client's address: the connection's peer, or, when the peer is a trusted proxy, the
    address ``X-Forwarded-For`` gives (each ``forwarded_for`` value is one header line)."""
    peer_text = peer or LOOPBACK
    address = _address(peer_text)
    if not _trusted(address, trusted):
        return normal_address(peer_text)
    hops = [hop.strip() for line in forwarded_for for hop in line.split(",") if hop.strip()]
    for hop in reversed(hops):
        hop_address = _address(hop)
        if hop_address is None:
            break  # an unreadable hop: nothing left of it can be believed
        if not _trusted(hop_address, trusted):
            return str(hop_address)
        address = hop_address
    return str(address)


# -- whose page is asking ------------------------------------------------------------------------------


def cookie_name(https: bool) -> str:
    return SECURE_COOKIE if https else COOKIE


def _origin_key(scheme: str, netloc: str) -> tuple[str, str, int] | None:
    """(scheme, host, port), the port made explicit, or None for what is not an HTTP(S) origin."""
    scheme = scheme.strip().lower()
    if scheme not in DEFAULT_PORTS or not netloc.strip():
        return None
    try:
        parts = urlsplit(f"{scheme}://{netloc.strip()}")
        host, port = parts.hostname, parts.port or DEFAULT_PORTS[scheme]
    except ValueError:
        return None
    return (scheme, host, port) if host else None


def app_origin(
    host: str | None,
    served_https: bool,
    peer: str | None,
    forwarded_proto: str | None,
    forwarded_host: str | None,
    trusted: Sequence[Network],
) -> tuple[str, str, int] | None:
    """The app's origin as this request addressed it: the server's scheme and the ``Host`` header; from
    a trusted proxy, its ``X-Forwarded-Proto`` and ``X-Forwarded-Host`` where it sends them."""
    scheme = "https" if served_https else "http"
    if from_trusted_proxy(peer, trusted):
        scheme = (forwarded_proto or "").split(",")[0].strip() or scheme
        host = (forwarded_host or "").split(",")[0].strip() or host
    return _origin_key(scheme, host or "")


def same_origin(origin: str | None, app: tuple[str, str, int] | None) -> bool:
    """Whether a request's ``Origin`` is the app's own: scheme, host and port."""
    if origin is None or app is None:
        return False
    parts = urlsplit(origin.strip())
    return _origin_key(parts.scheme, parts.netloc) == app
