"""A stand-in for a person's browser, for `lockstep login --sso` in tests: run as `$BROWSER`
with the address to open, it follows the redirects from lockstep to the test provider, fills
the provider's login form with STAND_IN_USER and STAND_IN_PASSWORD, and follows the redirects
back to wherever the sign-in returns (the CLI's loopback address)."""

from __future__ import annotations

import os
import sys

import httpx


def main(url: str) -> int:
    with httpx.Client(follow_redirects=True, timeout=30) as browser:
        login = browser.get(url)
        if login.status_code != 200 or "provider-username" not in login.text:
            print(f"no login form at {login.url}: {login.status_code}", file=sys.stderr)
            return 1
        credentials = {
            "username": os.environ["STAND_IN_USER"],
            "password": os.environ["STAND_IN_PASSWORD"],
        }
        back = browser.post(str(login.url), data=credentials)
        return 0 if back.status_code == 200 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
