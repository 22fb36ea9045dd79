"""Both engines' classes have the faces the pipelines call (searchengine/engines/base.py).

Every method of a protocol must exist on each engine's class with a
compatible signature: the protocol's parameters, by the same names, of the
same kinds (positional or keyword-only) and in the same order; any extra
parameter the engine takes has a default. A property stays a property, a
static method may stand for a method. A drift between what the pipelines
call and what an engine offers fails here, before a search finds it.
"""

from __future__ import annotations

import inspect

import pytest

from searchengine.engines import base
from searchengine.engines.opensearch import engine as os_engine
from searchengine.engines.opensearch import lexicon as os_lexicon
from searchengine.engines.opensearch import searcher as os_searcher
from searchengine.engines.opensearch.writer import ClusterWriter
from searchengine.engines.whoosh import engine as wh_engine
from searchengine.engines.whoosh import lexicon as wh_lexicon
from searchengine.engines.whoosh import searcher as wh_searcher
from searchengine.engines.whoosh.writer import WhooshWriter

CLASSES = [
    (base.Engine, wh_engine.WhooshEngine),
    (base.Engine, os_engine.OpenSearchEngine),
    (base.Searcher, wh_searcher.WhooshSearcher),
    (base.Searcher, os_searcher.OpenSearchSearcher),
    (base.Matches, wh_searcher.Matches),
    (base.Matches, os_searcher.Matches),
    (base.Lexicon, wh_lexicon.Lexicon),
    (base.Lexicon, os_lexicon.ClusterLexicon),
    (base.Corrections, wh_searcher.Corrections),
    (base.Corrections, os_lexicon.ClusterCorrections),
    (base.Writer, WhooshWriter),
    (base.Writer, ClusterWriter),
]


def _members(protocol: type) -> dict[str, object]:
    """The protocol's own methods and properties (not ``Protocol``'s machinery)."""
    found = {}
    for name, value in vars(protocol).items():
        if isinstance(value, (property, staticmethod)) or (
            inspect.isfunction(value) and (not name.startswith("_") or name in ("__enter__", "__exit__"))
        ):
            found[name] = value
    return found


def _attributes(protocol: type) -> list[str]:
    """The protocol's data attributes (annotated, no value)."""
    return [name for name in protocol.__dict__.get("__annotations__", {}) if name not in vars(protocol)]


def _parameters(function) -> list[inspect.Parameter]:
    """The parameters after ``self`` of a method (all of a static method's)."""
    parameters = list(inspect.signature(function).parameters.values())
    if parameters and parameters[0].name == "self":
        parameters = parameters[1:]
    return parameters


def _compatible(wanted, offered) -> str | None:
    """Why ``offered`` cannot be called as ``wanted`` is, or ``None``."""
    asked = _parameters(wanted)
    given = {parameter.name: parameter for parameter in _parameters(offered)}
    if any(p.kind is p.VAR_POSITIONAL for p in given.values()) and any(p.kind is p.VAR_KEYWORD for p in given.values()):
        return None  # (*args, **kwargs) takes anything
    order = [name for name in given]
    for parameter in asked:
        if parameter.kind is parameter.VAR_POSITIONAL:  # (*exc_info) of __exit__: three positionals
            continue
        mine = given.get(parameter.name)
        if mine is None:
            if any(p.kind is p.VAR_POSITIONAL for p in given.values()) and parameter.kind is not parameter.KEYWORD_ONLY:
                continue
            return f"has no parameter {parameter.name!r}"
        positional = (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD)
        if parameter.kind in positional and mine.kind not in positional:
            return f"takes {parameter.name!r} by keyword only"
        if parameter.kind is parameter.KEYWORD_ONLY and mine.kind is mine.POSITIONAL_ONLY:
            return f"takes {parameter.name!r} by position only"
        if parameter.default is not parameter.empty and mine.default is mine.empty:
            return f"requires {parameter.name!r}, which callers may leave out"
    asked_names = [p.name for p in asked if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if [name for name in order if name in asked_names] != asked_names:
        return f"orders its parameters {order}, not {asked_names}"
    for name, mine in given.items():
        if (
            name not in {p.name for p in asked}
            and mine.default is mine.empty
            and mine.kind not in (mine.VAR_POSITIONAL, mine.VAR_KEYWORD)
        ):
            return f"requires {name!r}, which callers never give"
    return None


@pytest.mark.parametrize(("protocol", "cls"), CLASSES, ids=lambda item: item.__qualname__)
def test_every_protocol_method_is_there_with_a_compatible_signature(protocol, cls):
    problems = []
    for name, wanted in _members(protocol).items():
        offered = inspect.getattr_static(cls, name, None)
        if offered is None:
            if (
                inspect.isclass(cls)
                and name in getattr(cls, "__dataclass_fields__", {})
                and isinstance(wanted, property)
            ):
                continue  # a dataclass field stands for a read-only property
            problems.append(f"{name}: missing")
            continue
        if isinstance(wanted, property):
            if not isinstance(offered, property) and name not in getattr(cls, "__dataclass_fields__", {}):
                problems.append(f"{name}: not a property")
            continue
        function = wanted.__func__ if isinstance(wanted, staticmethod) else wanted
        method = offered.__func__ if isinstance(offered, (staticmethod, classmethod)) else offered
        if not callable(method):
            problems.append(f"{name}: not a method")
            continue
        if isinstance(wanted, staticmethod) and not isinstance(offered, staticmethod):
            problems.append(f"{name}: not a static method")
            continue
        why = _compatible(function, method)
        if why is not None:
            problems.append(f"{name}: {why}")
    assert not problems, f"{cls.__module__}.{cls.__qualname__} drifted from {protocol.__qualname__}: {problems}"


@pytest.mark.parametrize(("protocol", "cls"), CLASSES, ids=lambda item: item.__qualname__)
def test_every_protocol_attribute_is_set(protocol, cls):
    source = inspect.getsource(cls)
    for name in _attributes(protocol):
        assert (
            name in vars(cls)
            or name in getattr(cls, "__dataclass_fields__", {})
            or f"self.{name} =" in source
            or f"self.{name}," in source
        ), f"{cls.__qualname__} never sets {name}"


def test_a_drift_fails():
    class Drifted:
        name = "drifted"

        @property
        def location(self) -> str:
            return ""

        def call(self, work, extra):  # a new required parameter
            return work(None)

        def close(self) -> None:  # and no check()
            pass

    missing = [name for name in _members(base.Engine) if inspect.getattr_static(Drifted, name, None) is None]
    assert missing == ["check"]
    assert _compatible(base.Engine.call, Drifted.call) == "requires 'extra', which callers never give"


def test_the_door_re_exports_the_protocols():
    from searchengine import engines

    for name in ("Engine", "Searcher", "Writer", "Matches", "Lexicon", "Corrections", "IndexCheck", "PartCheck"):
        assert getattr(engines, name) is getattr(base, name)
