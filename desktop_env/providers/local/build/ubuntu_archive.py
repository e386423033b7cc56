"""Ubuntu 22.04's archive and the one key it is trusted by, for every build that fetches from it (GNOME
Settings 41 in vm_settings.py, the whole userland in ubuntu_userland.py).

Ubuntu's archive is signed with "Ubuntu Archive Automatic Signing Key (2018)" (fingerprint
F6ECB3762474EDA9D21B7022871920D1991BC93C). Debian does not ship it, so the key file comes out of 22.04's
ubuntu-keyring package, fetched over plain HTTP as apt fetches packages, and is refused unless its SHA256 is
the one written here; apt then checks the archive's signed index with that key alone.
"""
from __future__ import annotations

import urllib.request
from pathlib import Path

from ....errors import MissingDependency
from .aside_packages import StepRunner, sha256_file

UBUNTU = "http://archive.ubuntu.com/ubuntu"
# jammy-security is published here first (archive.ubuntu.com mirrors it a little later)
UBUNTU_SECURITY = "http://security.ubuntu.com/ubuntu"
# 22.04's keyring package, in the release pocket (never changes), and its 2018 archive key.
KEYRING_DEB = f"{UBUNTU}/pool/main/u/ubuntu-keyring/ubuntu-keyring_2021.03.26_all.deb"
KEYRING_MEMBER = "etc/apt/trusted.gpg.d/ubuntu-keyring-2018-archive.gpg"
KEYRING_SHA256 = "bfdb0512804d0740816d836bb05b1ef8b27609771d7b9962c95bcc57bfaac230"
FETCH_TIMEOUT_S = 120


def fetch_keyring(folder: Path, what: str, error: type[MissingDependency], run: StepRunner,
                  url: str = KEYRING_DEB, sha256: str = KEYRING_SHA256) -> Path:
    """Ubuntu's 2018 archive key, out of the ubuntu-keyring package at `url`, unpacked in `folder`; `error`
    naming `what` is being installed when it cannot be fetched or its SHA256 is not `sha256`."""
    deb = folder / "ubuntu-keyring.deb"
    try:
        with urllib.request.urlopen(url, timeout=FETCH_TIMEOUT_S) as response:
            deb.write_bytes(response.read())
    except OSError as e:
        raise error(f"installing {what}, step 'fetch Ubuntu's archive key': {url}: {e}") from None
    unpacked = folder / "keyring"
    run("unpack Ubuntu's archive key", ["dpkg-deb", "-x", str(deb), str(unpacked)], folder, None)
    key = unpacked / KEYRING_MEMBER
    digest = sha256_file(key) if key.is_file() else "(missing)"
    if digest != sha256:
        raise error(f"{url}: {KEYRING_MEMBER} has SHA256 {digest}, not Ubuntu's 2018 archive key ({sha256}); "
                    "refusing to trust it")
    return key
