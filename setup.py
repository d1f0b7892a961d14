"""The optional native fast path (maxrepeat.core._native, a C extension): built where a C
compiler exists; where it cannot be built, the install goes on without it and the
pure-Python reference runs (docs/design/native.md), and the command says so once on its
first run (cli/group.py). Everything else is in pyproject.toml.

The long description is README.md with its relative links made absolute, so that they
work where the README is shown outside the repository (a package index): a page under
docs/ links to the documentation site, any other file to the repository.
"""

import re
import tomllib
from pathlib import Path

from setuptools import Extension, setup

HERE = Path(__file__).parent


def long_description() -> str:
    urls = tomllib.loads((HERE / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"]["urls"]
    site, source = urls["Documentation"].rstrip("/"), urls["Source"].rstrip("/")

    def absolute(match: re.Match) -> str:
        target = match.group(2)
        if re.match(r"[a-z]+:|#", target):
            return match.group(0)  # already absolute, or an anchor of the README itself
        path, _, anchor = target.partition("#")
        if path.startswith("docs/") and path.endswith(".md"):
            page = path[len("docs/"):-len(".md")]
            page = page[:-len("index")] if page.endswith("index") else page + "/"
            url = f"{site}/{page}"
        else:
            url = f"{source}/blob/main/{path}"
        return f"{match.group(1)}({url}{'#' + anchor if anchor else ''})"

    text = (HERE / "README.md").read_text(encoding="utf-8")
    return re.sub(r"(\]\s?)\(([^)\s]+)\)", absolute, text)


setup(
    long_description=long_description(),
    long_description_content_type="text/markdown",
    ext_modules=[
        Extension(
            "maxrepeat.core._native",
            # one translation unit each (docs/design/native.md, "Files")
            sources=[f"src/maxrepeat/core/{name}.c"
                     for name in ("_native", "_near", "_nearnorm", "_nearrewrite")],
            depends=[f"src/maxrepeat/core/{name}.h"
                     for name in ("_native", "_near", "_nz", "_walk")],
            optional=True,
        )
    ],
)
