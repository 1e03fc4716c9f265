"""A gang as the scheduler sees it: what each pod asks and which nodes it accepts, the gang's
shape, read from a stored workload, and the gangs a cycle decides on or may preempt."""
