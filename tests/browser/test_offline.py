"""Every page, its fonts and its icons load from the app itself: no request leaves for another host."""

from __future__ import annotations

from urllib.parse import urlparse

# Schemes the browser answers by itself, without a network request.
LOCAL_SCHEMES = {"data", "blob", "about", "chrome-extension"}


class RequestLog:
    def __init__(self) -> None:
        self.urls: list[tuple[str, str]] = []  # (page title, url)
        self.where = "start"

    def on_request(self, request) -> None:
        self.urls.append((self.where, request.url))

    def outside(self, app_url: str) -> list[str]:
        ours = urlparse(app_url).netloc
        return [
            f"{where}: {url}"
            for where, url in self.urls
            if urlparse(url).scheme not in LOCAL_SCHEMES and urlparse(url).netloc != ours
        ]


def test_no_page_requests_anything_from_another_host(page_tour, app_url):
    log = RequestLog()
    log.urls = page_tour.requests
    titles = page_tour.titles
    assert len(log.urls) > len(titles), "the log saw (almost) no requests: it checked nothing"
    assert any("/_stcore/" in url or "/static/" in url for _, url in log.urls), log.urls[:10]
    outside = log.outside(app_url)
    assert not outside, "requests to other hosts:\n" + "\n".join(sorted(set(outside)))
