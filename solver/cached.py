"""A cached property without a lock: :func:`functools.cached_property` as Python 3.12 has it.

Python 3.11's takes a lock (one per property, shared by every instance) on
each first read; the solver's cached properties are pure functions of
objects made for one run (a run's candidate sets, kinematics, contacts), of
which a bouncing ball's run reads a dozen for the first time: the lock cost
about 1 % of that run. Without it two threads that read the same property at
once may both compute it, and both get the same value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class cached_property(Generic[T]):  # noqa: N801 - the name of the functools decorator
    """A property computed on its first read and kept in the instance's ``__dict__``.

    Being a non-data descriptor, it is consulted only while the instance has no
    value of that name: later reads find the value in ``__dict__`` first.
    """

    def __init__(self, func: Callable[[Any], T]) -> None:
        self.func = func
        self.attrname: str | None = None
        self.__doc__ = func.__doc__
        self.__module__ = func.__module__

    def __set_name__(self, owner: type, name: str) -> None:
        if self.attrname is None:
            self.attrname = name
        elif name != self.attrname:
            raise TypeError(
                "Cannot assign the same cached_property to two different names "
                f"({self.attrname!r} and {name!r})."
            )

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        value = instance.__dict__[self.attrname] = self.func(instance)
        return value
