"""Runtimes run the pods of admitted workloads: `local` (process groups on this machine) and,
later, `kubernetes`. The reconciler talks to them only through `base.Runtime`."""
