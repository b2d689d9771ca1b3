"""Which packages install, and from where (the rest of the configuration is pyproject.toml).

The SPARQL queries stay in the repository's top-level ``sql/`` folder and install as the
package ``taxoforge.sql``, so the library loads them with ``importlib.resources`` wherever it
is installed (editable or from a wheel). Every other package is found where its folder is.
"""

from setuptools import find_namespace_packages, setup

QUERIES = "taxoforge.sql"

setup(
    packages=find_namespace_packages(include=["taxoforge", "taxoforge.*", "pipelines", "pipelines.*",
                                              "assets", "assets.*"])
    + [f"{QUERIES}{p[3:]}" for p in find_namespace_packages(include=["sql", "sql.*"])],
    package_dir={QUERIES: "sql"},
)
