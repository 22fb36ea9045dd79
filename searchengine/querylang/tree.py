"""The query tree: what a query means, for any search engine.

:func:`searchengine.querylang.parse` turns query text into these nodes once;
each engine translates them (:mod:`searchengine.engines.whoosh.querying` for
Whoosh). Leaves keep their text as typed: analysis (stemming, case and
accent folding, compounds) is the engine's. The nodes are frozen value
classes (:class:`Value`: what ``@dataclass(frozen=True)`` gives), so trees
compare with ``==`` and can be hashed.

Leaves:

* :class:`Word`: an unfielded word, searched in :data:`DEFAULT_FIELDS` as one
  BM25F term (a compound such as ``fail-slow`` also as its joined form and
  its parts in sequence).
* :class:`Joined`: neighbouring query words searched as one joined word
  (``fail slow`` → ``failslow``), in the default fields.
* :class:`FieldWord`: a word (or a single-quoted group of words) in one field.
* :class:`Phrase`: a quoted phrase, exact as written, in one field or in the
  default fields.
* :class:`Prefix`: the words starting with a prefix (``spars*``), in one
  field or in the default fields.
* :class:`Fuzzy`: the words within an edit distance of a word
  (``interpretability~2``), in one field or in the default fields.

Combinations: :class:`And`, :class:`Or`, :class:`Alternatives` (ways of
writing the same words: a hit scores by its best), :class:`Not`,
:class:`MinMatch` (at least ``minimum`` of the children), the binary
:class:`AndNot`, :class:`AndMaybe` and :class:`Require` (the ``ANDNOT``,
``ANDMAYBE`` and ``REQUIRE`` operators), and :class:`Proximity` (a plain
query whose hits gain where its words stand together). There are no boosts
in the language; the engines weigh :class:`Alternatives` and
:class:`Proximity` by their own parameters.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**kwargs: object) -> object:
        """At run time a no-op: the marker only tells type checkers that
        :class:`Value` subclasses are frozen dataclasses."""
        return lambda cls: cls


# Fields an unfielded word, phrase or prefix is searched in.
DEFAULT_FIELDS = ("title", "abstract", "authors")
#: A prefix or a fuzzy word matches at most this many index terms in a field
#: (prefixes the most frequent, fuzzy words the closest), in every engine:
#: ``s*`` or a short word with two edits would otherwise search a good part
#: of the vocabulary.
MAX_EXPANSIONS = 64


@dataclass_transform(frozen_default=True)
class Value:
    """A frozen value class: what ``@dataclass(frozen=True)`` gives, without its generated code.

    A subclass's annotated class attributes are its fields, in order (a
    class attribute's value is the field's default). It gets ``__init__``
    (positional or keyword arguments), ``__repr__`` (``Word(text='gpu')``),
    ``__eq__`` (same class, equal fields), ``__hash__`` (of the fields) and
    ``__match_args__``; assigning or deleting an attribute raises
    :class:`dataclasses.FrozenInstanceError`. A dataclass compiles six
    methods per class at import, 1 ms a class: 15 ms of every command-line
    search for the nodes here.
    """

    _fields: tuple[str, ...] = ()
    _defaults: dict[str, object] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._fields = tuple(cls.__dict__.get("__annotations__", {}))
        cls._defaults = {name: cls.__dict__[name] for name in cls._fields if name in cls.__dict__}
        setattr(cls, "__match_args__", cls._fields)  # noqa: B010 (mypy refuses assigning __match_args__)

    def __init__(self, *args: object, **kwargs: object) -> None:
        fields, name = self._fields, type(self).__qualname__
        if len(args) > len(fields):
            raise TypeError(
                f"{name}.__init__() takes {len(fields) + 1} positional arguments but {len(args) + 1} were given"
            )
        values = dict(zip(fields, args))
        for key, value in kwargs.items():
            if key not in fields:
                raise TypeError(f"{name}.__init__() got an unexpected keyword argument {key!r}")
            if key in values:
                raise TypeError(f"{name}.__init__() got multiple values for argument {key!r}")
            values[key] = value
        for field in fields:
            if field not in values:
                if field not in self._defaults:
                    raise TypeError(f"{name}.__init__() missing 1 required positional argument: {field!r}")
                values[field] = self._defaults[field]
            object.__setattr__(self, field, values[field])

    def _values(self) -> tuple[object, ...]:
        return tuple(self.__dict__[field] for field in self._fields)

    def __repr__(self) -> str:
        shown = ", ".join(f"{field}={self.__dict__[field]!r}" for field in self._fields)
        return f"{type(self).__qualname__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._values() == other._values()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._values())

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")


class Word(Value):
    """An unfielded query word as typed (``GPUs``, ``fail-slow``, ``C++``)."""

    text: str

    def __str__(self) -> str:
        return self.text


class Joined(Value):
    """Neighbouring words searched as one word: ``Joined(("fail", "slow"))`` is ``failslow``.

    Only the joined form is meant (the words apart are another alternative of
    the query). An engine whose analysis cuts the joined text into several
    terms in a field leaves that field out; with no field left the node
    matches nothing.
    """

    words: tuple[str, ...]

    @property
    def text(self) -> str:
        """The joined text (``failslow``)."""
        return "".join(self.words)

    def __str__(self) -> str:
        return "+".join(self.words)


class FieldWord(Value):
    """A word in one field (``title:gpu`` → ``FieldWord("title", "gpu")``).

    ``text`` is as typed and may hold several words (``title:'graph neural'``:
    then the words in sequence). ``field`` is an index field name (``title``,
    ``abstract``, ``authors``, ``id``, ``categories``, ``year``, ...).
    """

    field: str
    text: str

    def __str__(self) -> str:
        return f"{self.field}:{self.text}"


class Phrase(Value):
    """A quoted phrase, the words as written in sequence; ``field`` ``None``
    means any of :data:`DEFAULT_FIELDS` (each on its own)."""

    text: str
    field: str | None = None

    def __str__(self) -> str:
        return f'{self.field + ":" if self.field else ""}"{self.text}"'


class Prefix(Value):
    """Words starting with ``text`` (``spars*`` → ``Prefix("spars")``), not stemmed;
    ``field`` ``None`` means any of :data:`DEFAULT_FIELDS`."""

    text: str
    field: str | None = None

    def __str__(self) -> str:
        return f"{self.field + ':' if self.field else ''}{self.text}*"


class Fuzzy(Value):
    """Words within ``distance`` edits (1 or 2: an insertion, deletion,
    substitution or swap of neighbouring letters each) of ``text`` as the
    engine analyses it (``interpretability~2`` → ``Fuzzy("interpretability", 2)``),
    as Lucene's fuzzy query; ``field`` ``None`` means any of :data:`DEFAULT_FIELDS`.
    An engine expands it to at most :data:`MAX_EXPANSIONS` index terms, the closest."""

    text: str
    distance: int
    field: str | None = None

    def __str__(self) -> str:
        return f"{self.field + ':' if self.field else ''}{self.text}~{self.distance}"


class And(Value):
    """Every child must match; scores add up."""

    children: tuple[Node, ...]

    def __str__(self) -> str:
        return "(" + " AND ".join(map(str, self.children)) + ")"


class Or(Value):
    """Any child may match; scores add up."""

    children: tuple[Node, ...]

    def __str__(self) -> str:
        return "(" + " OR ".join(map(str, self.children)) + ")"


class Alternatives(Value):
    """Ways of writing the same words (``graph neural network``, ``graph
    neuralnetwork``): any child may match; a hit scores by its best-matching
    child, the first (the words as typed) in full and the others a little
    less, so no spelling counts twice and the typed one wins ties."""

    children: tuple[Node, ...]

    def __str__(self) -> str:
        return "(" + " | ".join(map(str, self.children)) + ")"


class MinMatch(Value):
    """At least ``minimum`` of the children must match (a long query's share of
    its words); scores add up. ``minimum`` is less than the number of children
    as parsed (some children may have been dropped since as matching nothing,
    but the share was taken of them all)."""

    children: tuple[Node, ...]
    minimum: int

    def __str__(self) -> str:
        return "(" + " ".join(map(str, self.children)) + f")>={self.minimum}"


class Not(Value):
    """Documents not matching the child (inside :class:`And`: excluded from the others' hits)."""

    child: Node

    def __str__(self) -> str:
        return f"NOT {self.child}"


class AndNot(Value):
    """``a ANDNOT b``: the hits of ``a`` without those of ``b``."""

    a: Node
    b: Node

    def __str__(self) -> str:
        return f"({self.a} ANDNOT {self.b})"


class AndMaybe(Value):
    """``a ANDMAYBE b``: the hits of ``a``; ``b`` only adds to their scores."""

    a: Node
    b: Node

    def __str__(self) -> str:
        return f"({self.a} ANDMAYBE {self.b})"


class Require(Value):
    """``a REQUIRE b``: the hits of ``a`` that also match ``b``, scored by ``a`` alone."""

    a: Node
    b: Node

    def __str__(self) -> str:
        return f"({self.a} REQUIRE {self.b})"


class Proximity(Value):
    """The hits of ``child`` (a query of plain words), scored higher where the
    query's ``words`` (as typed, in order, stop words included so that their
    gaps count) stand together in that order, more in the title than in the
    abstract. It matches what ``child`` matches."""

    child: Node
    words: tuple[str, ...]

    def __str__(self) -> str:
        return f"({self.child} NEAR {' '.join(self.words)!r})"


Node = (
    Word
    | Joined
    | FieldWord
    | Phrase
    | Prefix
    | Fuzzy
    | And
    | Or
    | Alternatives
    | MinMatch
    | Not
    | AndNot
    | AndMaybe
    | Require
    | Proximity
)
Leaf = Word | Joined | FieldWord | Phrase | Prefix | Fuzzy
LEAVES = (Word, Joined, FieldWord, Phrase, Prefix, Fuzzy)


def children(node: Node) -> tuple[Node, ...]:
    """The direct children of ``node`` (``()`` for a leaf)."""
    if isinstance(node, (And, Or, Alternatives, MinMatch)):
        return node.children
    if isinstance(node, (Not, Proximity)):
        return (node.child,)
    if isinstance(node, (AndNot, AndMaybe, Require)):
        return (node.a, node.b)
    return ()


def map_leaves(node: Node, change: Callable[[Leaf], Node]) -> Node:
    """``node`` with each leaf replaced by ``change(leaf)`` (a node); the tree
    is rebuilt only where a leaf changed."""
    if isinstance(node, LEAVES):
        return change(node)
    if isinstance(node, (And, Or, Alternatives)):
        kids = tuple(map_leaves(child, change) for child in node.children)
        return node if kids == node.children else type(node)(kids)
    if isinstance(node, MinMatch):
        kids = tuple(map_leaves(child, change) for child in node.children)
        return node if kids == node.children else MinMatch(kids, node.minimum)
    if isinstance(node, Not):
        child = map_leaves(node.child, change)
        return node if child == node.child else Not(child)
    if isinstance(node, Proximity):
        child = map_leaves(node.child, change)
        return node if child == node.child else Proximity(child, node.words)
    if isinstance(node, (AndNot, AndMaybe, Require)):
        a, b = map_leaves(node.a, change), map_leaves(node.b, change)
        return node if (a, b) == (node.a, node.b) else type(node)(a, b)
    return node


def leaves(node: Node) -> Iterator[Leaf]:
    """Every leaf of ``node``, depth first, left to right."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, LEAVES):
            yield current
        else:
            stack.extend(reversed(children(current)))
