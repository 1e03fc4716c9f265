"""Runtimes run the pods of admitted workloads: `local` (process groups on this machine) and
`kubernetes` (Kubeflow jobs on a cluster). The rest of lockstep drives each through one
interface, its backend (`backend.Backend`); `registry` picks the backend the settings choose
and is the only module that imports both runtime packages."""
