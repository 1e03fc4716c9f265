"""Use cases: each public method is one transaction with its access check. Routes call these."""
