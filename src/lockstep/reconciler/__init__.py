"""What every backend's reconciliation shares: the reconcile loop and its thread
(reconcile_loop.py), one pass written at once (passes.py), the work queue, leadership among
replicas, the controllers' interface (control.py), and what a reconciler records of the pods it
observes. Each backend's own reconciler sits above, in its runtime's package."""
