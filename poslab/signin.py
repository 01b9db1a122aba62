"""Roster sign-in: the link's address, the browser's cookie, the links' CSV, and who the client is
behind a reverse proxy.

A student's personal link is ``<app>/signin/<token>``. The app's route (``app_pages/runtime/server.py``)
checks the token in the store, sets ``COOKIE`` (HttpOnly, SameSite=Lax, a random session id whose
digest and expiry are in the store) and redirects to the app, so the token leaves the address bar.
A refused link redirects to ``/?signin=<why>``: ``REFUSALS`` says it in a sentence.

Behind a reverse proxy every connection comes from the proxy. ``client_address`` believes
``X-Forwarded-For`` only from a proxy listed in ``POSLAB_TRUSTED_PROXIES`` (addresses or networks,
comma-separated): it walks the header from the right and takes the first address that is not a
trusted proxy. From anyone else the header is ignored: a client could write anything in it.
"""

from __future__ import annotations

import csv
import io
import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the store imports poslab.config, which reads POSLAB_TRUSTED_PROXIES with this module
    from poslab.store import LinkRefusal, RosterMember

COOKIE = "poslab_signin"
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
        return ipaddress.ip_address(text)
    except ValueError:
        return None


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
        return peer_text
    hops = [hop.strip() for line in forwarded_for for hop in line.split(",") if hop.strip()]
    for hop in reversed(hops):
        hop_address = _address(hop)
        if hop_address is None:
            break  # an unreadable hop: nothing left of it can be believed
        if not _trusted(hop_address, trusted):
            return str(hop_address)
        address = hop_address
    return str(address)
