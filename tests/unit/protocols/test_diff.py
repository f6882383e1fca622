"""The diffs parsers write for new and deleted files are the ones ``difflib`` writes."""

from __future__ import annotations

import difflib

from hypothesis import given
from hypothesis import strategies as st

from corral.protocols._diff import unified

_LINES = st.lists(
    st.text(alphabet="ab\n\r\t é", max_size=6).map(lambda s: s + "\n")
    | st.text(alphabet="ab é", max_size=4),
    max_size=6,
)


@given(old=_LINES, new=_LINES, fromfile=st.sampled_from(["/dev/null", "a/x.py", "x y"]))
def test_same_as_difflib(old: list[str], new: list[str], fromfile: str) -> None:
    want = "".join(difflib.unified_diff(old, new, fromfile, "b/x.py"))
    assert unified(old, new, fromfile, "b/x.py") == want


def test_new_file_hunk() -> None:
    assert unified([], ["a\n", "b"], "/dev/null", "b/f") == (
        "--- /dev/null\n+++ b/f\n@@ -0,0 +1,2 @@\n+a\n+b"
    )
    assert unified(["a\n"], [], "a/f", "/dev/null") == "--- a/f\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n"
