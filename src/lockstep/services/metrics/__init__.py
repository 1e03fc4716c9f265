"""The metrics wing of the use cases: the series of a subject over a window (series.py), the
current figures (telemetry.py), where measured figures come from (sources.py: the local
runtime's samples in the store; prometheus_source.py with promql.py: a cluster's Prometheus)
and the gauges `/metrics` reads from the store at each scrape (gauges.py, workload_gauges.py).

What a figure is lives in domain/metrics.py, the samples' tables in store/metrics.py, the
request and answer documents in schemas/metrics.py, lockstep's own instruments in
observability/instruments.py, and the local runtime's sampler in runtimes/local/sampling/.
"""
