"""The window a metrics route is asked about, declared once: the query parameters every route of
`api/routes/metrics.py` takes (`metricType`, `start`, `end`, `numberOfSamples`), and those the
routes of a pool of pods add (`nodepoolName`) or a cluster's adds (`groupBy` too).

Each is one query model, so that FastAPI reads and checks its parameters as it would the
route's own (their types are checked with the path's, in the same order, and the document
describes them the same way); the window itself is parsed by the route, with `window()`, once
its other checks have passed.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Query
from pydantic import BaseModel, Field

from lockstep.domain.metrics import Window, parse_window


class WindowQuery(BaseModel):
    """What is measured (`metricType`, each possibly comma-separated) and over which window."""

    metric_type: list[str] | None = Field(default=None, alias="metricType")
    start: str | None = None
    end: str | None = None
    number_of_samples: int | None = Field(default=None, alias="numberOfSamples")

    def window(self) -> Window:
        """The window asked, or `InvalidRequest` naming each of its parameters that is wrong."""
        return parse_window(self.start, self.end, self.number_of_samples)


class PooledWindowQuery(WindowQuery):
    """A window of the pods of a project, department or the cluster, in one node pool or all."""

    nodepool_name: str | None = Field(default=None, alias="nodepoolName")


class ClusterWindowQuery(WindowQuery):
    """A cluster's window: a grouping (which lockstep refuses) and the node pool."""

    group_by: str | None = Field(default=None, alias="groupBy")
    nodepool_name: str | None = Field(default=None, alias="nodepoolName")


MetricsWindow = Annotated[WindowQuery, Query()]
PooledMetricsWindow = Annotated[PooledWindowQuery, Query()]
ClusterMetricsWindow = Annotated[ClusterWindowQuery, Query()]
