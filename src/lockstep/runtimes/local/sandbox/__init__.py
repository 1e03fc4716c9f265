"""The sandbox a local pod runs in, as contained as a container: its parts, one module each.

- `definition.py`: what one pod's sandbox is (`SandboxSpec`: mounts, root, identity,
  capabilities), kept with the pod's launch;
- `asked.py`: what a pod's spec asks of its sandbox (volumes, identity, privileges);
- `policy.py`: the sandbox this machine gives a pod: container defaults, what is asked, and
  lockstep's own files kept out of reach;
- `bwrap.py`: the command line that makes it (bubblewrap, setpriv, overlayfs);
- `probe.py`: what this machine offers (bwrap, root, overlayfs), tried once at start-up;
- `seccomp.py`: the default seccomp filter;
- `limits.py`: the pod's resource limits (cgroups, or pinning and a memory watchdog).

Who may ask for what (Pod Security levels) is checked at submission, for both runtimes, in
`lockstep.domain.pod_security`.
"""
