"""Times as the student reads them: in their browser's time zone, and always saying which zone.

The browser reports its IANA zone (``st.context.timezone``, e.g. "Europe/Paris") and its offset
from UTC with every run. A time is shown in that zone with the zone's abbreviation ("14:03:07
CEST"); with only an offset known, as "UTC+02:00"; with neither (a test harness, an old browser)
in UTC, saying "UTC". The store keeps every time in UTC.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import streamlit as st

TIME = "%H:%M:%S"
DATE_TIME = "%Y-%m-%d %H:%M"


def student_zone() -> tzinfo:
    """The browser's time zone, else a fixed offset from it, else UTC."""
    name = st.context.timezone
    if name:
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            pass
    offset = st.context.timezone_offset  # JavaScript's getTimezoneOffset(): minutes *behind* UTC
    if isinstance(offset, int) and abs(offset) < 24 * 60:
        return timezone(-timedelta(minutes=offset)) if offset else UTC
    return UTC


def shown(moment: datetime, layout: str = TIME) -> str:
    """``moment`` (aware, or naive UTC as the store's SQLite gives it) in the student's zone, with the zone."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    local = moment.astimezone(student_zone())
    return f"{local.strftime(layout)} {local.tzname()}"
