"""A Sphinx extension of the book (loaded through ``sphinx: local_extensions`` in ``_config.yml``).

It keeps the other ``autodoc-skip-member`` handlers away from pydantic's class internals (``__pydantic_serializer__``,
``__pydantic_validator__``, ``model_config``, ...) and skips those. Sphinx calls *every* handler of that event and
only then takes the first answer (``EventManager.emit_firstresult``), so answering first is not enough: napoleon's
handler still read their ``__doc__``, and on a parameter schema whose core schema is a placeholder in the Sphinx
process that read makes pydantic try to rebuild it, which failed intermittently ("`Params` is not fully defined")
and broke the warnings-as-errors build. So, once every extension is set up, each other handler is wrapped: it is not
called for a pydantic internal. The internals are not API, and ``model_config`` printed a raw dict on the parameter
pages.
"""

PYDANTIC_INTERNALS = ("model_config", "model_fields", "model_computed_fields")
EVENT = "autodoc-skip-member"


def is_pydantic_internal(name: str) -> bool:
    return name.startswith("__pydantic") or name in PYDANTIC_INTERNALS


def skip_pydantic_internals(app, what, name, obj, skip, options):
    return True if is_pydantic_internal(name) else None


def guarded(handler):
    """``handler`` of :data:`EVENT`, not called for a pydantic internal (answers None there)."""

    def skip_member(app, what, name, obj, skip, options):
        if is_pydantic_internal(name):
            return None
        return handler(app, what, name, obj, skip, options)

    skip_member.wrapped = handler
    return skip_member


def guard_other_handlers(app) -> None:
    """Replace every other handler of :data:`EVENT` (napoleon's, autosummary's, ...) by :func:`guarded` at the same
    priority."""
    for listener in list(app.events.listeners.get(EVENT, [])):
        if listener.handler is skip_pydantic_internals or hasattr(listener.handler, "wrapped"):
            continue
        app.disconnect(listener.id)
        app.connect(EVENT, guarded(listener.handler), priority=listener.priority)


def setup(app):
    app.connect(EVENT, skip_pydantic_internals, priority=100)
    app.connect("builder-inited", guard_other_handlers)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
