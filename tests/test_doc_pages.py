"""The user pages stay readable: the README's limits (its length, the what-and-why, the quickstart), pages
under docs/ of at most 400 lines without commit hashes (the design history aside), every public name in the
API reference, every page in the site's table of contents."""
import pathlib
import re
import shutil
import subprocess

import pytest

import fastgelu

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
USER_PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md"] + sorted(DOCS.glob("*.md"))
pytestmark = pytest.mark.skipif(not DOCS.is_dir(), reason="needs the source checkout")


def _section(text, heading):
    """The lines of a `## heading` section, up to the next `## `."""
    lines = text.splitlines()
    start = lines.index(f"## {heading}")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return lines[start + 1:end]


def test_readme_limits():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 120
    # the what and why: the first paragraph of the part the site shows
    after = text.split("<!-- site: begin -->", 1)[1].lstrip("\n")
    pitch = after.split("\n\n", 1)[0]
    assert len(pitch.split()) <= 80, len(pitch.split())
    quick = _section(text, "Quickstart")
    code = quick[quick.index("```python") + 1:]
    assert len(code[:code.index("```")]) <= 15
    assert "not on PyPI yet" in text


@pytest.mark.parametrize("page", USER_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_user_pages_are_short(page):
    assert len(page.read_text().splitlines()) <= 400


def test_no_commit_hashes_in_user_pages():
    """A token of 7 to 40 hex digits that names a commit of this repository (asked of git itself)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and the repository")
    tokens = {(p.relative_to(ROOT), t) for p in USER_PAGES
              for t in re.findall(r"(?<![\w.#/-])[0-9a-f]{7,40}(?![\w])", p.read_text())}
    if not tokens:
        return
    query = "".join(f"{t}^{{commit}}\n" for _, t in sorted(tokens))
    out = subprocess.run(["git", "-C", str(ROOT), "cat-file", "--batch-check"], input=query, capture_output=True,
                         text=True, check=True).stdout.splitlines()
    commits = {line.split()[0] for line in out if line.endswith(("commit", "commit\n")) or " commit " in line}
    found = sorted((str(p), t) for p, t in tokens if any(c.startswith(t) for c in commits))
    assert not found, found


def test_the_hash_check_finds_a_commit():
    """The check above must be able to fail: this commit's own hash is found as a commit."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and the repository")
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    out = subprocess.run(["git", "-C", str(ROOT), "cat-file", "--batch-check"], input=f"{head}^{{commit}}\n",
                         capture_output=True, text=True, check=True).stdout
    assert " commit " in out


def test_api_reference_lists_every_public_name():
    text = (DOCS / "api.md").read_text()
    listed = set(re.findall(r"^   (\w+)$", text, re.M)) | set(re.findall(r"^\.\. autofunction:: (\w+)$", text, re.M))
    names = set(fastgelu.__all__) - {"ufuncs", "__version__"}
    assert names <= listed, names - listed
    assert set(fastgelu.ufuncs.__all__) <= listed
    assert "fastgelu.ufuncs" in text and "__version__" in text
    torch_all = re.search(r"__all__ = (\[.*?\])", (ROOT / "fastgelu" / "torch.py").read_text(), re.S).group(1)
    assert set(eval(torch_all)) <= listed, set(eval(torch_all)) - listed


def test_every_page_is_in_the_sites_table_of_contents():
    index = (DOCS / "index.md").read_text() + (DOCS / "design" / "index.md").read_text()
    entries = set(re.findall(r"^([\w/-]+)$", index, re.M))
    pages = {str(p.relative_to(DOCS).with_suffix("")) for p in DOCS.rglob("*.md")
             if "_build" not in p.parts and p.name != "index.md"}
    pages |= {"design/index"}
    bare = {e.split("/")[-1] for e in entries}
    missing = {p for p in pages if p not in entries and p.split("/")[-1] not in bare}
    assert not missing, missing
