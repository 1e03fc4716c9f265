"""Gang admission: which pending workloads may start, all pods at once, on the capacity left.
Pure: a cycle takes a snapshot and the queue heads and returns decisions."""
