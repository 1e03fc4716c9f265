"""The reconciler drives each workload's actual phase toward its desired phase through a
runtime, one level-triggered pass at a time, and writes what it saw back to the store."""
