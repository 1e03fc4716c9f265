"""Making room for a waiting gang: which running workloads to stop, by reclaim across projects
or by priority within one."""
