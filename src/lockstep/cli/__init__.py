"""The `lockstep` command line: one module per command group, heavy imports deferred."""
