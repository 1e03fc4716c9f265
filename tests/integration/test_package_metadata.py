"""The project's metadata builds without a deprecation warning (`pip install` shows what the
build backend warns, twice), with the licence as an SPDX expression, and the build backend
that `[build-system]` pins can read it.

The metadata is prepared as pip prepares it (the backend's `prepare_metadata_for_build_wheel`),
by this environment's setuptools, in a copy of what the metadata is made from (pyproject.toml,
the README it names, the package's root): a couple of seconds, and the checkout is left as it
was."""

from __future__ import annotations

import importlib.metadata
import shutil
import subprocess
import sys
import tomllib
from email.parser import Parser
from pathlib import Path

from packaging.requirements import Requirement

from tests.support.requests import REPOSITORY

PYPROJECT = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())
SPDX_SINCE = "77.0.0"
"""The first setuptools that reads `project.license` as an SPDX expression (PEP 639)."""
BEFORE_SPDX = "76.1.0"
"""The last setuptools before it, which fails on such a licence."""


def test_the_metadata_builds_without_a_warning(tmp_path: Path) -> None:
    shutil.copy2(REPOSITORY / "pyproject.toml", tmp_path)
    shutil.copy2(REPOSITORY / "README.md", tmp_path)
    (tmp_path / "src/lockstep").mkdir(parents=True)
    shutil.copy2(REPOSITORY / "src/lockstep/__init__.py", tmp_path / "src/lockstep")
    (tmp_path / "out").mkdir()
    prepare = (
        "from setuptools import build_meta; "
        "print(build_meta.prepare_metadata_for_build_wheel('out'))"
    )
    finished = subprocess.run(
        [sys.executable, "-W", "default", "-c", prepare],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    output = finished.stdout + finished.stderr
    assert finished.returncode == 0, output
    assert "Warning" not in output, output
    assert "project.license" not in output, output
    info = finished.stdout.strip().splitlines()[-1]
    metadata = Parser().parsestr((tmp_path / "out" / info / "METADATA").read_text())
    assert metadata["License-Expression"] == "Apache-2.0"
    assert metadata["License"] is None


def test_the_pinned_build_backend_reads_an_spdx_licence() -> None:
    assert PYPROJECT["project"]["license"] == "Apache-2.0"
    (setuptools,) = (
        Requirement(r) for r in PYPROJECT["build-system"]["requires"] if r.startswith("setuptools")
    )
    assert not setuptools.specifier.contains(BEFORE_SPDX), setuptools
    assert setuptools.specifier.contains(SPDX_SINCE), setuptools
    assert setuptools.specifier.contains(importlib.metadata.version("setuptools")), setuptools
