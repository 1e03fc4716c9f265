"""Gang admission: which pending workloads may start, all pods at once, on the capacity left.
Pure: a cycle (cycle.py) takes a snapshot and the queue heads and returns its decisions
(decisions.py), drawing on four parts — quota/ (organisation, quotas, fair shares, books),
nodes/ (the nodes indexed, what is taken, placement and why a gang does not fit), gang/ (what
a gang's pods ask, its shape, the candidates and holders of a cycle) and preemption/ (whom to
stop to make room)."""
