"""The nodes: indexed once per node list, what is taken on each, where a gang's pods go, and
why a gang does not fit (now, or ever)."""
