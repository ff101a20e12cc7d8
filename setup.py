"""Build hook: the suites in ``scenarios/`` ship inside the wheel as the data package ``harness.suites``.

Everything else about the build is in ``pyproject.toml``. pyproject's
``packages.find`` cannot add a package that lives in another folder, so the
package list is here: every ``harness``/``memory_tools`` package, plus
``harness.suites`` mapped onto ``scenarios/`` (one copy in git; the files it
takes are ``package-data`` in ``pyproject.toml``). ``harness.scenarios.shipped``
finds it from any working folder.
"""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["harness", "harness.*", "memory_tools", "memory_tools.*"]), "harness.suites"],
    package_dir={"harness.suites": "scenarios"},
)
