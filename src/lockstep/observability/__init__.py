"""lockstep's own instruments (Prometheus counters, gauges and histograms), shared by the API
process and the reconciler process through prometheus_client's multiprocess mode."""
