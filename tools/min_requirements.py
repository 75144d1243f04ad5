"""Print pip constraints pinning each lower bound of pyproject.toml's build and run requirements.

Every `name>=version` of [build-system] requires and [project] dependencies becomes `name==version`, so that
`pip install -c` of the output builds and runs fastgelu with the oldest versions it claims to support
(.ci/run does this once on the oldest tested CPython). Requirements without a lower bound are left out.
Usage: python tools/min_requirements.py > constraints.txt
"""
import pathlib
import re
import tomllib

PYPROJECT = pathlib.Path(__file__).resolve().parent.parent / "pyproject.toml"


def lower_bounds(pyproject=PYPROJECT):
    """{name: version} for every `name>=version` requirement of the build and of the installed package."""
    meta = tomllib.loads(pyproject.read_text())
    bounds = {}
    for req in meta["build-system"]["requires"] + meta["project"]["dependencies"]:
        m = re.fullmatch(r"\s*([A-Za-z0-9_.-]+)\s*>=\s*([0-9][0-9A-Za-z.]*)\s*", req)
        if m:
            bounds[m[1]] = m[2]
    return bounds


if __name__ == "__main__":
    for name, version in lower_bounds().items():
        print(f"{name}=={version}")
