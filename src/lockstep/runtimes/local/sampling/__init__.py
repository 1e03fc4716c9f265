"""Sampling on the local runtime: what each pod uses of this machine (usage.py), taken every
interval for every pod by the sampler (sampler.py), whose rounds the store keeps for the
metrics use cases (services/metrics/)."""
