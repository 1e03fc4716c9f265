"""The local runtime: every pod is a supervised process group on this machine, given the
environment the Kubeflow operators give a pod, with its state kept on disk so that lockstep
can restart without losing or leaking a process."""
