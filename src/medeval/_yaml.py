"""Reading YAML (the chapters' parameter files, the data manifest, ``--set`` values, the book's table of contents)
with libyaml's C parser where PyYAML was built with it, else PyYAML's own.

Both apply the same safe constructor and resolvers, so they give the same values; the C parser reads the eight
parameter files and the manifest eight times faster (6 ms against 47 ms), and every kernel, command and worker
reads them when it starts.

Aliases are bounded. YAML's anchors and aliases let a few lines describe a structure whose expansion is exponential
(nine levels of nine aliases: 9^9 = 387 million leaves, the "billion laughs"); the safe loader builds it as a
shared graph in microseconds, and whatever walks it afterwards (validation, hashing, JSON) expands it: one such
``--set`` value took 88 s and 6.7 GB before it was refused. :func:`safe_load` counts the nodes of the document
as expanded, before constructing anything, and refuses one above :data:`MAX_EXPANDED_NODES` (or one that refers to
itself) with :class:`YAMLExpansionError`. The project's largest file, the data manifest, has 590.
"""

from __future__ import annotations

import yaml

SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: the most nodes a document may hold once every alias is expanded (the data manifest: 590)
MAX_EXPANDED_NODES = 100_000


class YAMLExpansionError(ValueError):
    """A YAML document whose aliases expand past :data:`MAX_EXPANDED_NODES` nodes, or refer to themselves."""


def expanded_size(node: yaml.Node, limit: int = MAX_EXPANDED_NODES) -> int:
    """Nodes of ``node`` with every alias expanded (an alias counts as the whole node it names), computed without
    expanding anything: each distinct node is sized once (the composed document is a graph whose aliases are shared
    nodes). Raises :class:`YAMLExpansionError` past ``limit`` or on a node that contains itself."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(node, False)]
    while stack:  # iterative post-order: deep nesting cannot exhaust Python's recursion limit
        current, children_done = stack.pop()
        key = id(current)
        if key in sizes:
            continue
        children = _children(current)
        if not children_done:
            if key in on_path:
                raise YAMLExpansionError("a YAML alias refers to the node that contains it (a recursive structure)")
            on_path.add(key)
            stack.append((current, True))
            for child in children:
                if id(child) in on_path:
                    raise YAMLExpansionError("a YAML alias refers to the node that contains it (a recursive "
                                             "structure)")
                if id(child) not in sizes:
                    stack.append((child, False))
            continue
        on_path.discard(key)
        total = 1 + sum(sizes[id(c)] for c in children)
        if total > limit:
            raise YAMLExpansionError(f"the YAML expands to more than {limit:,} nodes once its aliases (*name) are "
                                     "expanded: refused before it is built (an alias bomb, or a value far too "
                                     "large for a parameter)")
        sizes[key] = total
    return sizes[id(node)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def safe_load(stream):
    """``yaml.safe_load`` through :data:`SafeLoader`, refusing (:class:`YAMLExpansionError`) a document whose
    aliases expand past :data:`MAX_EXPANDED_NODES` nodes before anything is constructed."""
    loader = SafeLoader(stream)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        expanded_size(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()
