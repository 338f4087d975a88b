"""A Sphinx extension of the book (loaded through ``sphinx: local_extensions`` in ``_config.yml``).

It skips pydantic's class internals (``__pydantic_serializer__``, ``__pydantic_validator__``, ``model_config``, ...)
before any other ``autodoc-skip-member`` handler looks at them. napoleon's handler reads their ``__doc__``; on a
parameter schema whose core schema is not built in the Sphinx process, that read makes pydantic rebuild it there,
which failed intermittently ("`Params` is not fully defined") and broke the warnings-as-errors build. The internals
are not API, and ``model_config`` printed a raw dict on the parameter pages.
"""

PYDANTIC_INTERNALS = ("model_config", "model_fields", "model_computed_fields")


def skip_pydantic_internals(app, what, name, obj, skip, options):
    if name.startswith("__pydantic") or name in PYDANTIC_INTERNALS:
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", skip_pydantic_internals, priority=100)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
