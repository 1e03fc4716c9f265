"""lockstep: a control plane for distributed training that speaks the Run:ai REST API."""

__version__ = "0.1.0"
