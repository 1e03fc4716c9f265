"""The pure model of lockstep: workloads, replica plans, phases and typed errors. No I/O."""
