"""The optional native fast path (maxrepeat.core._native, a C extension): built where a C
compiler exists; where it cannot be built, the install goes on without it and the
pure-Python reference runs (docs/design/native.md). Everything else is in pyproject.toml."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "maxrepeat.core._native",
            sources=["src/maxrepeat/core/_native.c"],
            # included by _native.c
            depends=["src/maxrepeat/core/_near.c", "src/maxrepeat/core/_nearnorm.c",
                     "src/maxrepeat/core/_nearrewrite.c", "src/maxrepeat/core/_walk.h"],
            optional=True,
        )
    ]
)
