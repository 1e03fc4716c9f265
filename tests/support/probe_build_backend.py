"""A PEP 517 and PEP 660 build backend that needs nothing to build: the one of the one-module
project `install-probe` that tests/integration/test_serve_script.py installs with the real
`scripts/install`, offline, into a `.venv` of its own (copied there as `backend.py`)."""

from __future__ import annotations

import base64
import hashlib
import tomllib
import zipfile
from pathlib import Path

MODULE = "install_probe"


def _version() -> str:
    version: str = tomllib.loads(Path("pyproject.toml").read_text())["project"]["version"]
    return version


def _wheel(directory: str, files: dict[str, str]) -> str:
    """Write a wheel of `files` and the metadata pip reads into `directory`; its name."""
    version = _version()
    info = f"{MODULE}-{version}.dist-info"
    files = {
        **files,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: install-probe\nVersion: {version}\n",
        f"{info}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: probe\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = []
    for path, text in files.items():
        data = text.encode()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    files[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    name = f"{MODULE}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(Path(directory) / name, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return name


def build_wheel(
    wheel_directory: str,
    config_settings: dict[str, str] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """PEP 517: the module itself."""
    return _wheel(wheel_directory, {f"{MODULE}.py": Path(f"{MODULE}.py").read_text()})


def build_editable(
    wheel_directory: str,
    config_settings: dict[str, str] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """PEP 660: a path file naming the project's directory, as `pip install -e` makes."""
    return _wheel(wheel_directory, {f"{MODULE}.pth": f"{Path.cwd()}\n"})
