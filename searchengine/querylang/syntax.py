"""The query language's syntax: query text → syntax nodes → query tree.

This is the reading of query text that the product's parser has always done
(it was built from Whoosh's query parser and plugins), written out without
Whoosh: the same taggers in the same order, the same filters at the same
steps, the same operator precedence, so every query keeps its meaning.

1. Tagging (:func:`tag`): at each position the taggers are tried in order
   (``ANDNOT``/``ANDMAYBE``, single-quoted text, ``name:``, parentheses,
   ``NOT``/``AND``/``OR``/``REQUIRE``, quoted phrases, ``prefix*``,
   whitespace); text between matches becomes words.
2. Filters, in order: parentheses into groups; field names applied to the
   next node (unknown names back into text); keywords (stop words dropped,
   punctuation splitting words, compounds split in long queries, the
   joined alternatives of a short keyword query); unfielded words become
   default-field words; whitespace dropped; operators applied (``NOT``, then
   ``AND``, ``OR``, ``ANDNOT``, ``ANDMAYBE``, ``REQUIRE``, each left to right).
3. :func:`to_tree` turns the nodes into :mod:`~searchengine.querylang.tree`
   nodes, applying the share of words a long query needs to each group.

The parser then simplifies the tree (:func:`searchengine.querylang.parser.simplify`).
Nothing here raises for any input but :class:`NestingError` (parentheses or
``ANDNOT`` chains past :data:`MAX_NESTING`); the parser reports it as a
:class:`~searchengine.errors.QueryError`.
"""

from __future__ import annotations

import math
import re
import unicodedata
from typing import TYPE_CHECKING, cast

from searchengine.analysis.compounds import text_tokens
from searchengine.analysis.folding import transliterated
from searchengine.analysis.tokens import DASHES, name_tokens, spaced_tokens, word_pattern
from searchengine.querylang import tree as t
from searchengine.querylang.text import greek_spelling

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import TypeAlias

    from typing_extensions import Self

    # A syntax node made from a match of a tagger's pattern.
    Tagger = tuple[re.Pattern[str], Callable[[re.Match[str]], "Node"]]
    # A query tree before simplify: a tree node, or NULL (also inside: see _nodes).
    Raw: TypeAlias = "t.Node | Null"

# A query of this many terms or fewer needs all of them in a hit.
ALL_TERMS_UP_TO = 3
# A query of plain words typed as keywords (up to this many words, at most
# KEYWORD_STOP_WORDS of them stop words) needs all of them too, as arXiv
# search and NASA ADS answer "compilation agent benchmark driven"; a question
# (words joined by stop words: "what is the buzz of an aileron") needs a share.
KEYWORDS_UP_TO = 6
KEYWORD_STOP_WORDS = 0
# A longer query needs this share of its terms in a hit (rounded up), and at
# least LONG_QUERY_MIN of them.
MIN_SHOULD_MATCH = 0.05
LONG_QUERY_MIN = 2
# Letters required before a wildcard ``*``.
MIN_PREFIX = 2
# Parentheses nested deeper than this are refused (the old parser ran out of
# stack somewhere past 320, depending on its caller; nobody nests this deep).
MAX_NESTING = 300

# The index's fields, by how a query word or phrase in them is analysed.
# A ``name:`` naming none of them is text. (The query syntax lets only
# title/abstract/id through on purpose, but text such as ``x.url:y`` has
# always reached the others; the engines decide what searching them means.)
TEXT_FIELDS = frozenset({"title", "abstract"})
NAME_FIELDS = frozenset({"authors"})
SPACED_FIELDS = frozenset({"categories", "category_keys"})
EXACT_FIELDS = frozenset({"id", "doi"})
NUMBER_FIELDS = frozenset({"year"})
# Stored or column-only: not searchable (the engines reject a query naming them).
UNSEARCHABLE_FIELDS = frozenset(
    {
        "url",
        "source",
        "version",
        "facet_data",
        "sort_title",
        "pdf_url",
        "journal_ref",
        "comments",
        "license",
        "day",
        "dates",
        "date_data",
    }
)  # the day is for date filters only
INDEX_FIELDS = TEXT_FIELDS | NAME_FIELDS | SPACED_FIELDS | EXACT_FIELDS | NUMBER_FIELDS | UNSEARCHABLE_FIELDS

_DASH = re.compile(f"[{DASHES}]")


def required_terms(count: int) -> int:
    """How many of ``count`` query terms a hit must contain (the documented rule)."""
    if count <= ALL_TERMS_UP_TO:
        return count
    return max(LONG_QUERY_MIN, math.ceil(MIN_SHOULD_MATCH * count))


# --- syntax nodes ---------------------------------------------------------------


class Node:
    """A syntax node: ``fieldname`` and ``text`` where ``has_fieldname``/``has_text``."""

    has_fieldname = False
    has_text = False
    # Set only where has_fieldname / has_text says so.
    fieldname: str | None
    text: str

    def set_fieldname(self, name: str, override: bool = False) -> None:
        if self.has_fieldname and (self.fieldname is None or override):
            self.fieldname = name

    def __repr__(self) -> str:
        field = f"{self.fieldname}:" if self.has_fieldname and self.fieldname else ""
        text = repr(self.text) if self.has_text else ""
        return f"<{type(self).__name__} {field}{text}>"


class Whitespace(Node):
    pass


class OpenBracket(Node):
    pass


class CloseBracket(Node):
    pass


class FieldnameNode(Node):
    """``name:`` (applies to the next node, or is text)."""

    fieldname: str

    def __init__(self, fieldname: str, original: str) -> None:
        self.fieldname = fieldname
        self.original = original


class TextNode(Node):
    has_fieldname = True
    has_text = True

    def __init__(self, text: str) -> None:
        self.text = text
        self.fieldname = None


class WordNode(TextNode):
    pass


class PhraseNode(TextNode):
    pass


class PrefixNode(TextNode):
    pass


class FuzzyNode(TextNode):
    """``word~N``: the words within ``distance`` edits of ``word``."""

    def __init__(self, text: str, distance: int) -> None:
        super().__init__(text)
        self.distance = distance


class FieldsTermNode(TextNode):
    """An unfielded word, searched in the default fields."""

    has_fieldname = False


class JoinedWordNode(TextNode):
    """Neighbouring words joined."""

    has_fieldname = False

    def __init__(self, words: tuple[str, ...]) -> None:
        super().__init__("".join(words))
        self.words = words


class Operator(Node):
    def __init__(self, text: str, grouptype: type[GroupNode], prefix: bool = False) -> None:
        self.text = text
        self.grouptype = grouptype
        self.prefix = prefix

    def __repr__(self) -> str:
        return f"<OP {self.text}>"


class GroupNode(Node):
    """Nodes grouped (a list-like container); ``merging``: an infix operator
    of this group's kind appends to an existing group on its left."""

    merging = True

    def __init__(self, nodes: Iterable[Node] | None = None) -> None:
        self.nodes = list(nodes or [])

    def empty_copy(self) -> Self:
        return type(self)()

    def set_fieldname(self, name: str, override: bool = False) -> None:
        for node in self.nodes:
            node.set_fieldname(name, override)

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)

    def __getitem__(self, i: int) -> Node:
        return self.nodes[i]

    def __setitem__(self, i: int, value: Node) -> None:
        self.nodes[i] = value

    def __delitem__(self, i: int) -> None:
        del self.nodes[i]

    def append(self, node: Node) -> None:
        self.nodes.append(node)

    def __repr__(self) -> str:
        return f"{type(self).__name__}{self.nodes!r}"


class TermsGroup(GroupNode):
    """A top-level or parenthesised group: :func:`required_terms` of its
    children, or all of them for a keyword query (``keywords``: see
    :data:`KEYWORDS_UP_TO`)."""

    keywords = False

    def empty_copy(self) -> Self:
        copy = type(self)()
        copy.keywords = self.keywords
        return copy


class AndGroup(GroupNode):
    pass


class OrGroup(GroupNode):
    pass


class AlternativesGroup(GroupNode):
    """Ways of writing the same words (the joined alternatives of a keyword query)."""

    merging = False


class NotGroup(GroupNode):
    merging = False


class BinaryGroup(GroupNode):
    merging = False


class AndNotGroup(BinaryGroup):
    pass


class AndMaybeGroup(BinaryGroup):
    pass


class RequireGroup(BinaryGroup):
    pass


# --- tagging --------------------------------------------------------------------


def _operator(pattern: str, grouptype: type[GroupNode], prefix: bool = False) -> Tagger:
    expr = re.compile(pattern)

    def make(match: re.Match[str]) -> Node:
        return Operator(match.group(0), grouptype, prefix)

    return expr, make


# ``word~``, ``word~1``, ``word~2`` (Lucene's fuzzy suffix; no number is 2):
# a word starting with a letter, the tilde ending it. Other distances are
# not syntax (the parser refuses them in a keyword query).
FUZZY = re.compile(r"(?<![^\s(:])(?P<text>[^\W\d_][^\s()\"*?:~]*)~(?P<distance>[0-2])?(?=[\s)]|$)")
DEFAULT_FUZZY_DISTANCE = 2


def _fuzzy(match: re.Match[str]) -> Node:
    digit = match.group("distance")
    distance = DEFAULT_FUZZY_DISTANCE if digit is None else int(digit)
    # No edit allowed: the word itself, analysed like any other.
    return FuzzyNode(match.group("text"), distance) if distance else WordNode(match.group("text"))


# In the order they are tried at each position (first match wins).
TAGGERS: list[Tagger] = [
    _operator(r"(?<=\s)ANDNOT(?=\s)", AndNotGroup),
    _operator(r"(?<=\s)ANDMAYBE(?=\s)", AndMaybeGroup),
    (re.compile(r"(^|(?<=\W))'(?P<text>.*?)'(?=\s|\]|[)}]|$)"), lambda m: WordNode(m.group("text"))),
    (re.compile(r"(?P<text>\w+|[*]):"), lambda m: FieldnameNode(m.group("text"), m.group(0))),
    (re.compile(r"[(]"), lambda m: OpenBracket()),
    (re.compile(r"[)]"), lambda m: CloseBracket()),
    _operator(r"(^|(?<=(\s|[()])))NOT(?=\s)", NotGroup, prefix=True),
    _operator(r"(?<=\s)AND(?=\s)", AndGroup),
    _operator(r"(?<=\s)OR(?=\s)", OrGroup),
    _operator(r"(^|(?<=\s))REQUIRE(?=\s)", RequireGroup),
    (re.compile(r'"(?P<text>.*?)"'), lambda m: PhraseNode(m.group("text"))),
    (FUZZY, _fuzzy),
    (re.compile(rf"(?P<text>[^\s()\"*?:]{{{MIN_PREFIX},}})\*(?=[\s)]|$)"), lambda m: PrefixNode(m.group("text"))),
    (re.compile(r"\s+"), lambda m: Whitespace()),
]


def tag(text: str) -> TermsGroup:
    """The flat list of syntax nodes of ``text``, in a :class:`TermsGroup`."""
    stack: list[Node] = []
    pos = prev = 0
    while pos < len(text):
        for expr, make in TAGGERS:
            match = expr.match(text, pos)
            if match:
                if prev < pos:
                    stack.append(WordNode(text[prev:pos]))
                stack.append(make(match))
                prev = pos = match.end()
                break
        else:
            pos += 1
    if prev < len(text):
        stack.append(WordNode(text[prev:]))
    return TermsGroup(stack)


# --- filters ----------------------------------------------------------------------


def do_groups(group: GroupNode) -> GroupNode:
    """Parentheses → nested :class:`TermsGroup`; an unmatched ``)`` is dropped,
    the nodes after an unclosed ``(`` join the top level."""
    stack = [TermsGroup()]
    for node in group:
        if isinstance(node, OpenBracket):
            stack.append(TermsGroup())
        elif isinstance(node, CloseBracket):
            if len(stack) > 1:
                last = stack.pop()
                stack[-1].append(last)
        else:
            stack[-1].append(node)
    top: GroupNode = stack[0]
    for level in stack[1:]:
        top.nodes.extend(level.nodes)
    if len(top) == 1 and isinstance(top[0], GroupNode):
        top = top[0]
    return top


def _to_word(node: FieldnameNode) -> WordNode:
    return WordNode(node.original)


def do_fieldnames(group: GroupNode) -> GroupNode:
    """Apply each ``name:`` to the node after it; names of no index field become text."""
    newgroup = group.empty_copy()
    unknown: list[FieldnameNode] = []
    for node in group:
        if isinstance(node, FieldnameNode) and node.fieldname not in INDEX_FIELDS:
            unknown.append(node)
            continue
        if unknown:
            original = "".join(n.original for n in unknown)
            if node.has_text:
                node.text = original + node.text
            else:
                newgroup.append(_merge_field_nodes(unknown))
            unknown = []
        newgroup.append(node)
    if unknown:
        newgroup.append(_merge_field_nodes(unknown))
    group = newgroup

    out: list[Node] = []
    i = len(group)
    while i > 0:
        i -= 1
        node = group[i]
        if isinstance(node, FieldnameNode):
            node = _to_word(node)
        elif isinstance(node, GroupNode):
            node = do_fieldnames(node)
        before = group[i - 1] if i > 0 else None
        if not isinstance(node, Whitespace) and isinstance(before, FieldnameNode):
            node.set_fieldname(before.fieldname, override=False)
            i -= 1
        out.append(node)
    out.reverse()
    result = group.empty_copy()
    result.nodes = out
    return result


def _merge_field_nodes(nodes: list[FieldnameNode]) -> WordNode:
    return WordNode("".join(n.original for n in nodes))


def _plain(node: Node) -> bool:
    return type(node) is WordNode and node.fieldname is None


def do_keywords(group: GroupNode, top: bool = True) -> GroupNode:
    """Drop unfielded stop words, split words at punctuation; in a long query
    split compounds; make a keyword query of 2 to :data:`ALL_TERMS_UP_TO`
    words without hyphens the alternatives of every way to join neighbours."""
    out = group.empty_copy()
    stops, pasted = 0, False
    for node in group:
        if isinstance(node, GroupNode):
            out.append(do_keywords(node, top=False))
            continue
        if not _plain(node):
            out.append(node)
            continue
        # Punctuation between words separates them (heat/transfer, "why?").
        found = list(word_pattern(node.text).finditer(node.text))
        if len(found) > 1:
            pasted = True  # a link or punctuated text: pasted, not typed as keywords
        for match in found:
            if text_tokens(match.group()):
                out.append(WordNode(match.group()))
            else:
                stops += 1
    words = [node for node in out if not isinstance(node, Whitespace)]
    if (
        top
        and isinstance(out, TermsGroup)
        and ALL_TERMS_UP_TO < len(words) <= KEYWORDS_UP_TO
        and stops <= KEYWORD_STOP_WORDS
        and not pasted
        and all(type(n) is WordNode for n in words)
    ):
        out.keywords = True
    if top and len(words) > ALL_TERMS_UP_TO:
        # A long query ranks by many words: a hyphenated word counts as its parts.
        out = _split_compounds(out)
    if (
        not top
        or not 2 <= len(words) <= ALL_TERMS_UP_TO
        or not all(_plain(n) and not _DASH.search(n.text) for n in words)
    ):
        return out
    alternatives = AlternativesGroup()
    for segmentation in _segmentations(words):
        alternatives.append(AndGroup([_word(nodes) for nodes in segmentation]))
    joined = group.empty_copy()
    joined.append(alternatives)
    return joined


def _split_compounds(group: GroupNode) -> GroupNode:
    out = group.empty_copy()
    for node in group:
        if _plain(node) and _DASH.search(node.text):
            out.nodes.extend(WordNode(part) for part in _DASH.split(node.text) if part)
        else:
            out.append(node)
    return out


def _segmentations(words: list[Node]) -> list[list[tuple[Node, ...]]]:
    """Every way to join neighbouring pairs: ``[a, b]`` → ``[[(a,), (b,)], [(a, b)]]``."""
    if len(words) < 2:
        return [[(word,) for word in words]]
    keep = [[(words[0],), *rest] for rest in _segmentations(words[1:])]
    joined = [[(words[0], words[1]), *rest] for rest in _segmentations(words[2:])]
    return keep + joined


def _word(nodes: tuple[Node, ...]) -> Node:
    if len(nodes) == 1:
        return WordNode(nodes[0].text)
    return JoinedWordNode(tuple(node.text for node in nodes))


def do_default_fields(group: GroupNode) -> GroupNode:
    """Unfielded words → :class:`FieldsTermNode` (searched in the default fields)."""
    for i, node in enumerate(group):
        if _plain(node):
            group[i] = FieldsTermNode(node.text)
    for i, node in enumerate(group):
        if isinstance(node, GroupNode):
            group[i] = do_default_fields(node)
    return group


def remove_whitespace(group: GroupNode) -> GroupNode:
    """``group`` without :class:`Whitespace` nodes, at every level."""
    out = group.empty_copy()
    for node in group:
        if isinstance(node, GroupNode):
            out.append(remove_whitespace(node))
        elif not isinstance(node, Whitespace):
            out.append(node)
    return out


# The operators in the order they are applied (precedence).
_OPERATOR_ORDER = [
    (True, NotGroup),
    (False, AndGroup),
    (False, OrGroup),
    (False, AndNotGroup),
    (False, AndMaybeGroup),
    (False, RequireGroup),
]


def do_operators(group: GroupNode) -> GroupNode:
    """Apply the operators: each kind left to right, ``NOT`` first, then ``AND``, ``OR``, ..."""
    for prefix, gtype in _OPERATOR_ORDER:
        i = 0
        while i < len(group):
            node = group[i]
            if isinstance(node, Operator) and node.prefix == prefix and node.grouptype is gtype:
                i = _prefix_operator(group, i) if prefix else _infix_operator(group, i, gtype)
            else:
                i += 1
    for i, node in enumerate(group):
        if isinstance(node, GroupNode):
            group[i] = do_operators(node)
    return group


def _prefix_operator(group: GroupNode, position: int) -> int:
    length = len(group)
    del group[position]
    if position < length - 1:
        group[position] = NotGroup([group[position]])
    return position


def _infix_operator(group: GroupNode, position: int, gtype: type[GroupNode]) -> int:
    if 0 < position < len(group) - 1:
        left, right = group[position - 1], group[position + 1]
        if gtype.merging and isinstance(left, gtype):
            left.append(right)
            del group.nodes[position : position + 2]
        else:
            group.nodes[position - 1 : position + 2] = [gtype([left, right])]
    else:
        del group[position]
    return position


class NestingError(ValueError):
    """Parentheses, or ``ANDNOT``/``ANDMAYBE``/``REQUIRE`` chains, nested deeper than :data:`MAX_NESTING`."""


def _check_nesting(group: GroupNode) -> None:
    depth = deepest = 0
    for node in group:
        if isinstance(node, OpenBracket):
            depth += 1
            deepest = max(deepest, depth)
        elif isinstance(node, CloseBracket) and depth:
            depth -= 1
    if deepest > MAX_NESTING:
        raise NestingError(f"parentheses nested more than {MAX_NESTING} deep")


def _check_chains(group: GroupNode) -> None:
    """``a ANDNOT b ANDNOT c ...`` nests one group per operator: bound it as parentheses are."""
    stack: list[tuple[Node, int]] = [(group, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, BinaryGroup):
            depth += 1
            if depth > MAX_NESTING:
                raise NestingError(f"ANDNOT, ANDMAYBE or REQUIRE chained more than {MAX_NESTING} deep")
        if isinstance(node, GroupNode):
            stack.extend((child, depth) for child in node.nodes)


def syntax_tree(text: str) -> GroupNode:
    """``text`` (already prepared) tagged and filtered into syntax nodes.

    Raises:
        NestingError: parentheses, or a chain of ``ANDNOT``, ``ANDMAYBE`` or
            ``REQUIRE``, nested deeper than :data:`MAX_NESTING`.
    """
    group: GroupNode = tag(text)
    _check_nesting(group)
    group = do_groups(group)
    group = do_fieldnames(group)
    group = do_keywords(group)
    group = do_default_fields(group)
    group = remove_whitespace(group)
    group = do_operators(group)
    _check_chains(group)
    return group


# --- syntax nodes → query tree ------------------------------------------------------


class Null:
    """Stands for "nothing" where an operator had no operand left (``a ANDNOT b``
    with neither searchable); unlike an empty group it counts as a term.
    Only in trees before :func:`~searchengine.querylang.parser.simplify`."""

    def __repr__(self) -> str:
        return "Null"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Null)

    def __hash__(self) -> int:
        return hash("Null")


NULL = Null()


def field_word_searches(field: str, text: str) -> bool:
    """Whether a word in ``field`` leaves something to search (``title:the`` does not)."""
    if field in TEXT_FIELDS:
        return bool(text_tokens(text))
    if field in NAME_FIELDS:
        return bool(name_tokens(text))
    if field in SPACED_FIELDS:
        return bool(spaced_tokens(text))
    return True  # id: the whole text; year: a number, or an error the engine reports


def phrase_searches(field: str, text: str) -> bool:
    """Whether a phrase in ``field`` leaves something to search (``title:"the"`` does not)."""
    if field in NUMBER_FIELDS or field in UNSEARCHABLE_FIELDS:
        return True  # the engine reads or rejects it
    if not word_pattern(text).search(text):
        return False
    if field in TEXT_FIELDS:
        return bool(text_tokens(text, phrase=True))
    if field in SPACED_FIELDS:
        return bool(spaced_tokens(text))
    return True


def default_phrase_searches(text: str) -> bool:
    """Whether an unfielded phrase leaves something to search in any default field."""
    return any(phrase_searches(field, text) for field in t.DEFAULT_FIELDS)


def _empty_compound(node: Raw) -> bool:
    return isinstance(node, (t.And, t.Or)) and not node.children


# Before simplify, NULL may stand where a tree node does: the tree's classes are
# typed for simplified trees (what engines get), and hold it as it is.


def _node(node: Raw) -> t.Node:
    return cast("t.Node", node)


def _nodes(nodes: tuple[Raw, ...]) -> tuple[t.Node, ...]:
    return cast("tuple[t.Node, ...]", nodes)


def _subtrees(nodes: list[Node]) -> tuple[t.Node, ...]:
    return _nodes(tuple(c for c in map(to_tree, nodes) if c is not None))


def to_tree(node: Node) -> Raw | None:
    """The query tree of a syntax node: a tree node, :data:`NULL`, or ``None``
    for nothing to search (a stop word in a field, an empty phrase)."""
    if isinstance(node, TermsGroup):
        subs = _subtrees(node.nodes)
        needed = len(subs) if node.keywords else required_terms(len(subs))
        return t.And(subs) if needed >= len(subs) else t.MinMatch(subs, needed)
    if isinstance(node, AndGroup):
        return t.And(_subtrees(node.nodes))
    if isinstance(node, AlternativesGroup):
        return t.Alternatives(_subtrees(node.nodes))
    if isinstance(node, OrGroup):
        return t.Or(_subtrees(node.nodes))
    if isinstance(node, NotGroup):
        if not node.nodes:
            return None
        child = to_tree(node.nodes[0])
        # An empty group, or a phrase with no word in any default field, is nothing to exclude.
        if (
            child is None
            or _empty_compound(child)
            or (isinstance(child, t.Phrase) and child.field is None and not default_phrase_searches(child.text))
        ):
            return None
        return t.Not(_node(child))
    if isinstance(node, BinaryGroup):
        a, b = to_tree(node.nodes[0]), to_tree(node.nodes[1])
        if a is None and b is None:
            return NULL
        if a is None or b is None:
            return b if a is None else a
        kinds: dict[type[Node], Callable[[t.Node, t.Node], t.Node]] = {
            AndNotGroup: t.AndNot,
            AndMaybeGroup: t.AndMaybe,
            RequireGroup: t.Require,
        }
        return kinds[type(node)](_node(a), _node(b))
    if isinstance(node, FieldsTermNode):
        return _spellings(node.text, t.Word)
    if isinstance(node, JoinedWordNode):
        return t.Joined(node.words)
    if isinstance(node, PhraseNode):
        if node.fieldname is None:
            return t.Phrase(node.text)
        return t.Phrase(node.text, node.fieldname) if phrase_searches(node.fieldname, node.text) else None
    if isinstance(node, PrefixNode):
        return t.Prefix(node.text, node.fieldname)
    if isinstance(node, FuzzyNode):
        fieldname = node.fieldname
        if not (field_word_searches(fieldname, node.text) if fieldname is not None else text_tokens(node.text)):
            return None  # a stop word
        return t.Fuzzy(node.text, node.distance, node.fieldname)
    if isinstance(node, WordNode):
        if node.fieldname is None:  # cannot happen: unfielded words became FieldsTermNode
            return t.Word(node.text)
        if not field_word_searches(node.fieldname, node.text):
            return None
        if node.fieldname in TEXT_FIELDS:
            fieldname = node.fieldname
            return _spellings(node.text, lambda text: t.FieldWord(fieldname, text))
        return t.FieldWord(node.fieldname, node.text)
    raise ValueError(f"unexpected syntax node {node!r}")


def _spellings(text: str, make: Callable[[str], t.Word | t.FieldWord]) -> t.Node:
    """``make(text)``, or the alternatives ``make(text)`` and ``make`` of the
    word's other spelling: for a word typed with an umlaut (``Müller``) its
    transliteration (``Mueller``; folding finds Müller and Muller, the other
    spelling Mueller), for a Greek letter its name or symbol (``alpha``,
    ``α``)."""
    other = greek_spelling(text)
    if other is None and not text.isascii():
        other = transliterated(unicodedata.normalize("NFC", text))
    return make(text) if other is None else t.Alternatives((make(text), make(other)))
