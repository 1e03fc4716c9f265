"""The git volume: a repository cloned at a branch and a revision into a directory before a
pod starts, with credentials from the project's secrets.

Called by the local runtime when it prepares a pod's `storage.git` entries: `source_of` (or
`credentials_of`) turns an entry and the project's secrets into a `GitSource`, and `clone` runs
the real `git` binary to fill the directory that is then bound at the entry's `path`.

- `git clone --depth 1 [--branch B]` fetches the branch's tip only. A revision (a commit id, a
  tag or a branch) is then found locally, else fetched alone (`git fetch --depth 1 origin REV`:
  tags, branches, and the full commit ids a server lets one fetch), else looked up in the whole
  history of every branch and tag (an abbreviated commit id needs that), and checked out
  detached. `clone` returns the commit checked out.
- Credentials never reach git's argv, the URL or the environment. A username and password go
  to a file (0600, in a private temporary directory removed afterwards) that a credential
  helper, scoped to the repository's scheme, host and port, hands to git. An ssh key goes to a
  file (0600) named by `GIT_SSH_COMMAND` (`ssh -i FILE -o IdentitiesOnly=yes -o BatchMode=yes`),
  so the server's host key must be known to this machine's ssh (its known_hosts files).
- git runs hermetically: it never prompts (`GIT_TERMINAL_PROMPT=0`, no askpass program), reads
  neither the user's nor the system's git configuration (their credential helpers would store
  the password), inherits none of lockstep's `GIT_*` variables but `GIT_SSL_*` and
  `GIT_PROXY_*`, and speaks only the file, git, http, https and ssh transports.
- Any failure raises `VolumeError` with git's own message, every form of a credential in it
  (plain, URL-encoded, `user:password`, Basic-auth base64) replaced by `***`.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, quote_plus, urlsplit, urlunsplit

from lockstep.domain.secrets import ProjectSecrets
from lockstep.runtimes.local.volumes import VolumeError
from lockstep.schemas.storage import Git, GitAuthenticationMethod

log = logging.getLogger(__name__)

DEFAULT_USER_KEY = "User"
"""The key of the username in the secret when the entry names none (as the API documents)."""
DEFAULT_PASSWORD_KEY = "Password"  # noqa: S105 (the name of a secret's key)
"""The key of the password in the secret when the entry names none (as the API documents)."""
SSH_KEY = "ssh-privatekey"
"""The key of an ssh-key secret holding the private key (that of a `kubernetes.io/ssh-auth`
secret, as the Kubernetes runtime reads it)."""
REDACTED = "***"
PROTOCOLS = ("file", "git", "http", "https", "ssh")
"""The transports git may use (`GIT_ALLOW_PROTOCOL`); `ext::` and other remote helpers are not."""

_HTTP = frozenset({"http", "https"})
_SSH = frozenset({"ssh", "git+ssh", "ssh+git"})
_KEPT_GIT_VARIABLES = ("GIT_SSL_", "GIT_PROXY_")
_DROPPED_VARIABLES = frozenset({"SSH_ASKPASS", "SSH_ASKPASS_REQUIRE"})
_REMOTE_HELPER = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)::")
_NETLOC = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~-]+)(:[0-9]+)?$")
_BAD_REF = re.compile(r"^-|[:\s\x00-\x1f\x7f]")
_ENCODED_BYTE = re.compile(r"%[0-9A-F]{2}")


@dataclass(frozen=True, slots=True)
class GitCredentials:
    """What a git entry's secret holds: a username and password, or an ssh private key."""

    username: str | None = None
    password: str | None = field(default=None, repr=False)
    ssh_key: str | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class GitSource:
    """A repository to clone: where, at which branch and revision, with which credentials."""

    repository: str
    branch: str | None = None
    revision: str | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    ssh_key: str | None = field(default=None, repr=False)


# --- the entry and the project's secrets --------------------------------------------------------


def credentials_of(git: Git, secrets: ProjectSecrets) -> GitCredentials | None:
    """The credentials a git entry names (`secretRef`, else the older `passwordSecret` with
    `secretKeyOfUser` and `secretKeyOfPassword`), read from the project's secrets; None when it
    names none. Raises VolumeError naming the secret and key that do not exist."""
    repository = display(git.repository or "")
    ref = git.secret_ref
    if ref is not None and ref.authentication_method is GitAuthenticationMethod.SSH_KEY:
        return GitCredentials(ssh_key=_secret(secrets, ref.name, SSH_KEY, repository))
    if ref is not None:
        name, user_key, password_key = ref.name, ref.secret_key_of_user, ref.secret_key_of_password
    elif git.password_secret:
        name, user_key, password_key = (
            git.password_secret,
            git.secret_key_of_user,
            git.secret_key_of_password,
        )
    else:
        return None
    user_key, password_key = user_key or DEFAULT_USER_KEY, password_key or DEFAULT_PASSWORD_KEY
    username = _secret(secrets, name, user_key, repository)
    password = _secret(secrets, name, password_key, repository)
    for key, value in ((user_key, username), (password_key, password)):
        if not _one_line(value):
            raise VolumeError(
                f"cannot clone {repository}: the value of key {key!r} of secret {name!r} "
                "holds a line break, which git cannot take as a credential"
            )
    return GitCredentials(username=username, password=password)


def source_of(git: Git, secrets: ProjectSecrets) -> GitSource:
    """The `GitSource` of a git entry, its credentials read from the project's secrets."""
    if not git.repository:
        raise VolumeError("a git storage entry needs a repository")
    credentials = credentials_of(git, secrets) or GitCredentials()
    return GitSource(
        repository=git.repository,
        branch=git.branch,
        revision=git.revision,
        username=credentials.username,
        password=credentials.password,
        ssh_key=credentials.ssh_key,
    )


def _secret(secrets: ProjectSecrets, name: str, key: str, repository: str) -> str:
    value = secrets.secret(name, key)
    if value is None:
        raise VolumeError(
            f"cannot clone {repository}: the project has no secret {name!r} with a key {key!r}"
        )
    return value


def _one_line(value: str) -> bool:
    return not any(c in value for c in "\n\r\x00")


# --- pure helpers: transports, checks, redaction, argv and environment ---------------------------


def transport_of(repository: str) -> str:
    """The transport git would use for `repository`: a URL's scheme, `ssh` for scp-like
    `user@host:path`, the helper of `helper::address`, `file` for a local path."""
    helper = _REMOTE_HELPER.match(repository)
    if helper:
        return helper.group(1).lower()
    if "://" in repository:
        return repository.split("://", 1)[0].lower()
    if ":" in repository.split("/", 1)[0]:
        return "ssh"
    return "file"


def display(repository: str) -> str:
    """`repository` as it may be shown: any password in the URL replaced by `***`."""
    if "://" not in repository:
        return repository
    with contextlib.suppress(ValueError):
        parts = urlsplit(repository)
        if parts.password is not None:
            host = parts.netloc.rpartition("@")[2]
            netloc = f"{parts.username or ''}:{REDACTED}@{host}"
            return urlunsplit(parts._replace(netloc=netloc))
    return repository


def origin_of(repository: str) -> str:
    """`scheme://host[:port]` of an http(s) repository: what its credentials are scoped to."""
    try:
        parts = urlsplit(repository)
    except ValueError as e:
        raise VolumeError(f"cannot clone {display(repository)}: not a valid URL") from e
    host = parts.netloc.rpartition("@")[2]
    if not _NETLOC.match(host):
        raise VolumeError(f"cannot clone {display(repository)}: not a valid URL")
    return f"{parts.scheme.lower()}://{host}"


def check_source(source: GitSource) -> None:
    """Refuse, before running git, what git must not be asked to do."""
    repository = display(source.repository)
    transport = transport_of(source.repository)
    if not source.repository or source.repository.startswith("-"):
        raise VolumeError(f"cannot clone {repository!r}: not a repository URL or path")
    if transport not in PROTOCOLS:
        raise VolumeError(
            f"cannot clone {repository}: lockstep clones over {', '.join(PROTOCOLS)} only, "
            f"not {transport}"
        )
    if "://" in source.repository and repository != source.repository:
        raise VolumeError(
            f"cannot clone {repository}: the URL holds a password; put the credentials in a "
            "secret of the project and name it in secretRef"
        )
    for what, ref in (("branch", source.branch), ("revision", source.revision)):
        if ref is not None and (not ref or _BAD_REF.search(ref)):
            raise VolumeError(f"cannot clone {repository}: {ref!r} is not a valid {what}")
    if source.username is not None or source.password is not None:
        if transport not in _HTTP:
            raise VolumeError(
                f"cannot clone {repository}: a username and password work over http(s) only; "
                "use authenticationMethod ssh-key for an ssh repository"
            )
        if not all(_one_line(v) for v in (source.username or "", source.password or "")):
            raise VolumeError(
                f"cannot clone {repository}: a credential holds a line break, which git cannot take"
            )
    if source.ssh_key is not None and transport not in _SSH:
        raise VolumeError(
            f"cannot clone {repository}: an ssh key needs an ssh repository URL "
            "(ssh://… or user@host:path)"
        )


def secret_forms(source: GitSource) -> tuple[str, ...]:
    """Every form in which a credential of `source` could appear in git's output, longest
    first: the password and the key as they are and URL-encoded, `user:password` likewise and
    as HTTP Basic authorization (base64)."""
    forms: set[str] = set()
    for secret in (source.password, source.ssh_key, (source.ssh_key or "").strip()):
        if secret:
            forms |= {secret, quote(secret, safe=""), quote(secret), quote_plus(secret)}
    if source.password:
        user = source.username or ""
        pair = f"{user}:{source.password}"
        forms |= {
            pair,
            f"{quote(user, safe='')}:{quote(source.password, safe='')}",
            base64.b64encode(pair.encode()).decode(),
        }
    lower_hex = {_ENCODED_BYTE.sub(lambda m: m.group(0).lower(), f) for f in forms}
    return tuple(sorted((forms | lower_hex) - {""}, key=lambda f: (-len(f), f)))


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` with every occurrence of each of `secrets` replaced by `***` (longest first)."""
    for secret in sorted(secrets, key=len, reverse=True):
        if secret:
            text = text.replace(secret, REDACTED)
    return text


def credential_lines(source: GitSource) -> str:
    """What the credential helper prints for git (git's credential protocol)."""
    lines = [f"username={source.username}"] if source.username is not None else []
    if source.password is not None:
        lines.append(f"password={source.password}")
    return "".join(f"{line}\n" for line in lines)


def credential_config(repository: str, credentials_file: Path | None) -> list[str]:
    """The `-c` options of every git command: no other credential helper, and one that prints
    `credentials_file`, for the repository's origin only (a redirect elsewhere gets nothing)."""
    if credentials_file is None:
        return []
    helper = f'!f() {{ test "$1" != get || cat {shlex.quote(str(credentials_file))}; }}; f'
    return [
        "-c",
        "credential.helper=",
        "-c",
        f"credential.{origin_of(repository)}.helper={helper}",
    ]


def clone_argv(source: GitSource, into: Path, *, config: list[str]) -> list[str]:
    """`git clone` of the branch's tip (left unchecked-out when a revision follows)."""
    argv = ["git", *config, "clone", "--quiet", "--depth", "1"]
    if source.revision is not None:
        argv.append("--no-checkout")
    if source.branch is not None:
        argv += ["--branch", source.branch]
    return [*argv, "--", source.repository, str(into)]


def fetch_argv(revision: str, *, config: list[str]) -> list[str]:
    """`git fetch` of one revision alone (into FETCH_HEAD)."""
    return ["git", *config, "fetch", "--quiet", "--depth", "1", "origin", revision]


def fetch_all_argv(*, shallow: bool, config: list[str]) -> list[str]:
    """`git fetch` of the whole history of every branch and tag."""
    unshallow = ["--unshallow"] if shallow else []
    refspec = "+refs/heads/*:refs/remotes/origin/*"
    return ["git", *config, "fetch", "--quiet", *unshallow, "--tags", "origin", refspec]


def git_environment(base: Mapping[str, str], *, ssh_key_file: Path | None) -> dict[str, str]:
    """The environment of every git command: `base` without what would make git prompt or
    read configuration lockstep does not control, plus the ssh command when a key is used."""
    env = {
        name: value
        for name, value in base.items()
        if name not in _DROPPED_VARIABLES
        and (not name.startswith("GIT_") or name.startswith(_KEPT_GIT_VARIABLES))
    }
    env |= {
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_ALLOW_PROTOCOL": ":".join(PROTOCOLS),
        "LC_ALL": "C",
    }
    if ssh_key_file is not None:
        env["GIT_SSH_COMMAND"] = shlex.join(
            ["ssh", "-i", str(ssh_key_file), "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes"]
        )
    return env


# --- running git ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Files:
    credentials: Path | None = None
    ssh_key: Path | None = None


@contextlib.contextmanager
def _credential_files(source: GitSource) -> Iterator[_Files]:
    """The source's credentials in 0600 files of a private directory, removed on exit."""
    has_password = source.username is not None or source.password is not None
    if not has_password and source.ssh_key is None:
        yield _Files()
        return
    directory = Path(tempfile.mkdtemp(prefix="lockstep-git-"))
    try:
        credentials = ssh_key = None
        if has_password:
            credentials = _private_file(directory / "credentials", credential_lines(source))
        if source.ssh_key is not None:
            key = source.ssh_key if source.ssh_key.endswith("\n") else f"{source.ssh_key}\n"
            ssh_key = _private_file(directory / "ssh-key", key)
        yield _Files(credentials=credentials, ssh_key=ssh_key)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _private_file(path: Path, content: str) -> Path:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(content)
    return path


@dataclass(frozen=True, slots=True)
class _Ran:
    returncode: int
    stdout: str
    stderr: str
    """Already redacted."""


@dataclass(frozen=True, slots=True)
class _Git:
    """Runs git commands for one clone, all within one deadline."""

    source: GitSource
    env: Mapping[str, str]
    deadline: float
    timeout: float
    secrets: tuple[str, ...]

    def run(self, argv: list[str], *, cwd: Path | None = None) -> _Ran:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise self._timed_out()
        log.debug("running %s", shlex.join(argv))
        with subprocess.Popen(
            argv,
            cwd=cwd,
            env=dict(self.env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        ) as process:
            try:
                stdout, stderr = process.communicate(timeout=remaining)
            except subprocess.TimeoutExpired:
                _kill_group(process)
                process.communicate()
                raise self._timed_out() from None
            except BaseException:
                _kill_group(process)
                raise
        return _Ran(
            process.returncode,
            stdout.decode(errors="replace"),
            redact(stderr.decode(errors="replace"), self.secrets).strip(),
        )

    def check(self, argv: list[str], *, cwd: Path | None = None) -> str:
        ran = self.run(argv, cwd=cwd)
        if ran.returncode != 0:
            raise self.failed(ran)
        return ran.stdout.strip()

    def failed(self, ran: _Ran, what: str = "") -> VolumeError:
        detail = ran.stderr or f"git exited with status {ran.returncode}"
        return VolumeError(f"cannot clone {display(self.source.repository)}: {what}{detail}")

    def _timed_out(self) -> VolumeError:
        return VolumeError(
            f"cannot clone {display(self.source.repository)}: git did not finish within "
            f"{self.timeout:g} s"
        )


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


def clone(source: GitSource, into: Path, *, timeout: float) -> str:
    """Clone `source` into `into` (absent or an empty directory), which ends up holding the
    working tree at the branch's tip or at the revision; return the commit id checked out.

    Raises VolumeError with git's message, credentials redacted, when git fails or runs past
    `timeout` seconds (all of its commands together); `into` is then left as it was.
    """
    check_source(source)
    existed = into.exists()
    if existed and (not into.is_dir() or any(into.iterdir())):
        raise VolumeError(
            f"cannot clone {display(source.repository)}: {into} exists and is not an empty "
            "directory"
        )
    try:
        with _credential_files(source) as files:
            git = _Git(
                source=source,
                env=git_environment(os.environ, ssh_key_file=files.ssh_key),
                deadline=time.monotonic() + timeout,
                timeout=timeout,
                secrets=secret_forms(source),
            )
            config = credential_config(source.repository, files.credentials)
            git.check(clone_argv(source, into, config=config))
            if source.revision is not None:
                commit = _find(git, source.revision, into=into, config=config)
                git.check(["git", "checkout", "--quiet", "--detach", commit], cwd=into)
            commit = git.check(["git", "rev-parse", "HEAD"], cwd=into)
    except BaseException:
        _discard(into, existed=existed)
        raise
    log.info("cloned %s at %s into %s", display(source.repository), commit, into)
    return commit


def _find(git: _Git, revision: str, *, into: Path, config: list[str]) -> str:
    """The commit id of `revision` in the clone at `into`, fetching what it lacks."""
    found = _resolve(git, f"{revision}^{{commit}}", into=into)
    if found:
        return found
    fetched = git.run(fetch_argv(revision, config=config), cwd=into)
    if fetched.returncode == 0:
        return git.check(["git", "rev-parse", "--verify", "FETCH_HEAD^{commit}"], cwd=into)
    shallow = git.check(["git", "rev-parse", "--is-shallow-repository"], cwd=into) == "true"
    git.check(fetch_all_argv(shallow=shallow, config=config), cwd=into)
    found = _resolve(git, f"{revision}^{{commit}}", into=into)
    if found:
        return found
    raise git.failed(fetched, f"revision {revision!r} not found: ")


def _resolve(git: _Git, name: str, *, into: Path) -> str | None:
    ran = git.run(["git", "rev-parse", "--verify", "--quiet", name], cwd=into)
    return ran.stdout.strip() if ran.returncode == 0 else None


def _discard(into: Path, *, existed: bool) -> None:
    """Remove what a failed clone left in `into` (`into` itself unless it was there before)."""
    if not existed:
        shutil.rmtree(into, ignore_errors=True)
        return
    for child in into.iterdir() if into.is_dir() else ():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)
