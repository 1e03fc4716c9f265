"""A gang described by its shape: groups of pods that ask alike (how many, and what each asks),
so that whether it could ever fit is decided before a single per-pod object is made
(nodes/ever_fits.py). A gang of a million workers is two groups (its leader and its workers),
not a million pods; its pods are made one by one only when asked for.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import islice
from typing import overload

from lockstep.scheduler.gang.needs import PodNeed


@dataclass(frozen=True, slots=True)
class NumberedNames(Sequence[str]):
    """`total` pod names `<prefix><index>`, indexes counting from `first`, none of them made
    until asked for."""

    prefix: str
    first: int
    total: int

    def __len__(self) -> int:
        return self.total

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> NumberedNames: ...

    def __getitem__(self, index: int | slice) -> str | NumberedNames:
        indexes = range(self.first, self.first + self.total)
        if isinstance(index, slice):
            chosen = indexes[index]
            if chosen.step != 1:
                raise ValueError("only contiguous slices of pod names are supported")
            return NumberedNames(self.prefix, chosen.start, len(chosen))
        return f"{self.prefix}{indexes[index]}"

    def __iter__(self) -> Iterator[str]:
        return (f"{self.prefix}{i}" for i in range(self.first, self.first + self.total))


@dataclass(frozen=True, slots=True)
class PodGroup:
    """Pods that each ask what `need` asks; `need.pod` is ignored (`names` name the pods)."""

    need: PodNeed
    names: Sequence[str]

    @property
    def count(self) -> int:
        return len(self.names)

    def pods(self) -> Iterator[PodNeed]:
        return (replace(self.need, pod=name) for name in self.names)


@dataclass(frozen=True, slots=True)
class GangShape:
    """Every pod of a gang as groups, in rank order (the leader first)."""

    groups: tuple[PodGroup, ...]

    @classmethod
    def of(cls, needs: Sequence[PodNeed]) -> GangShape:
        """A shape of pods given one by one (each its own group)."""
        return cls(tuple(PodGroup(need, (need.pod,)) for need in needs))

    @property
    def size(self) -> int:
        return sum(group.count for group in self.groups)

    def first(self, count: int) -> GangShape:
        """The shape of its first `count` pods."""
        groups = []
        for group in self.groups:
            if count <= 0:
                break
            taken = min(count, group.count)
            groups.append(PodGroup(group.need, group.names[:taken]))
            count -= taken
        return GangShape(tuple(groups))

    def pods(self, limit: int | None = None) -> Iterator[PodNeed]:
        """Its pods one by one, in rank order: the first `limit` only when given."""
        every = (need for group in self.groups for need in group.pods())
        return every if limit is None else islice(every, limit)
