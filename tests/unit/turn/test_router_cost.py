"""Reading a message costs work linear in its length: the offline router, with the date reader, the
detail reader and the match against the events snapshot's titles (README, Hostile and unusual input).

What is counted is work, not time: every Python line run and every call into C (``str``, ``re``,
builtins) while a step reads a text, through ``sys.settrace`` and ``sys.setprofile``. A step that
tries every stretch of the text against every title, or compares every match with every earlier
one, does many times more of it for 5,000 characters than for 1,000; a linear one at most five
times as much (less, with its fixed part). The texts are ``tools.hostile_text``'s shapes, the ones
``make bench`` times. Each count starts from cleared caches, so a text's own words are read anew.
"""
from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable

import pytest

from shared.turn.router import route
from tools.hostile_text import SHAPES, hostile_text

#: 5× the text may cost at most this many times the work (linear, with room for what a text's
#: content changes, e.g. one more clause read): quadratic work would be about 25×.
GROWTH_MAX = 6.0
SHORT, LONG = 1000, 5000
#: The modules whose cached readings of a text are cleared before each count.
_READERS = ("shared.turn.router", "shared.turn.rules.titles", "shared.turn.dates", "shared.turn.details", "shared.areas",
            "shared.places.search", "shared.text", "shared.turn.crisis")


class StepBudgetExceeded(BaseException):
    """Raised inside the counted call once it did more than its budget (a BaseException, so no
    ``except Exception`` in the code read swallows it and runs on uncounted)."""


def _clear_caches() -> None:
    """Forget every cached reading of a text (a cached function whose first argument is a ``str``);
    what is loaded once per process (the converter's dictionaries, the calendar) stays."""
    for name in _READERS:
        for value in list(vars(importlib.import_module(name)).values()):
            clear = getattr(value, "cache_clear", None)
            if callable(clear) and _reads_text(value):
                clear()


def _reads_text(function: Callable[..., object]) -> bool:
    parameters = list(inspect.signature(function).parameters.values())
    return bool(parameters) and parameters[0].annotation in (str, "str")


def steps(read: Callable[[str], object], text: str, budget: int | None = None) -> int:
    """The lines run and C functions called while ``read(text)`` runs, caches cleared first (then a
    short unrelated text read, so what every reading loads once is loaded before counting).

    Raises:
        StepBudgetExceeded: more than ``budget`` steps (the count stops there).
    """
    _clear_caches()
    read("你好")
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
            if budget is not None and count > budget:
                raise StepBudgetExceeded(count)
        return tracer

    def profiler(frame, event, arg):
        nonlocal count
        if event == "c_call":
            count += 1

    sys.setprofile(profiler)
    sys.settrace(tracer)
    try:
        read(text)
    finally:
        sys.settrace(None)
        sys.setprofile(None)
    return count


def assert_linear(read: Callable[[str], object], shape: str) -> None:
    short = steps(read, hostile_text(shape, SHORT))
    budget = int(short * GROWTH_MAX)
    try:
        long = steps(read, hostile_text(shape, LONG), budget)
    except StepBudgetExceeded:
        pytest.fail(f"{shape}: {SHORT} units took {short} steps, {LONG} units more than {budget} "
                    f"(over {GROWTH_MAX}× for 5× the text)")
    assert long <= budget, (shape, short, long)


@pytest.mark.parametrize("shape", SHAPES)
def test_route_work_grows_linearly_with_the_text(shape):
    assert_linear(route, shape)


#: A snapshot of many events whose titles all hold the words the shapes repeat: the title match's
#: work per title must not grow with the text either.
_MANY_TITLES = tuple(f"{words}第{number}場" for number in range(20)
                     for words in ("花壇啊啊週末市集", "彰化市這週末活動看看", "聖誕節日夕晚會"))


@pytest.mark.parametrize("shape", ("char", "township", "sentence"))
def test_route_with_many_titles_work_grows_linearly_with_the_text(shape):
    def read(text: str) -> object:
        return route(text, _MANY_TITLES)

    assert_linear(read, shape)
