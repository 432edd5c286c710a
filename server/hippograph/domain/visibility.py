"""The scope rule: a caller in one scope sees that scope and global, and nothing of any other.

Every read applies it through one value, the scopes a caller sees (``visible_scopes``): the
vector index filters its rows by them (``store.vector_rows.Filter``), the read model's walks,
neighbour shares, tag and entity lookups by them (``store.seam.GraphView``). A write may
join only what one scope sees (``link_refusal``), so no edge needs the rule to hide it.

An operation on an id (explain, confirm, forget, mark_used, correct, link) looks the fact or
entity up as its caller's scope sees it (``service.stores.Stores.fact``/``entity``): one of
another scope is not found, in the very words an id that never existed gets, so the answer
does not tell that it exists. A caller in ``global`` sees global alone, as its search does:
each project's and session's facts are hidden from it as from one another; a call that names
the fact's scope (as the search that found it did) reaches it.
"""

from __future__ import annotations

from hippograph.domain.models import GLOBAL_SCOPE


def visible_scopes(scope: str) -> tuple[str, ...]:
    """Scopes whose entities and facts a caller in ``scope`` sees: its own, and global."""
    return (scope,) if scope == GLOBAL_SCOPE else (scope, GLOBAL_SCOPE)


def link_refusal(src: tuple[str, str], dst: tuple[str, str]) -> str | None:
    """Why a link between two nodes, each (id, scope), would cross scopes; None if it may be made.

    Two facts must share a scope (a link from a project fact could otherwise supersede a global
    one). A fact may be about an entity its scope sees, as remember links them; two entities may
    relate if one of them sees the other.
    """
    (a, a_scope), (b, b_scope) = src, dst
    if a.startswith("f_") and b.startswith("f_"):
        allowed = a_scope == b_scope
    elif a.startswith("f_") or b.startswith("f_"):
        fact_scope, entity_scope = (a_scope, b_scope) if a.startswith("f_") else (b_scope, a_scope)
        allowed = entity_scope in visible_scopes(fact_scope)
    else:
        allowed = b_scope in visible_scopes(a_scope) or a_scope in visible_scopes(b_scope)
    if allowed:
        return None
    return (
        f"{a} is in scope {a_scope!r} and {b} in {b_scope!r}: a link joins facts of one scope "
        f"(or a fact and an entity its scope sees). Nothing was linked; link two ids of the same "
        f"scope, or remember the statement again in the scope it belongs to"
    )
