"""Paths a file names stay inside their root (kramabench.files.paths.inside)."""

from __future__ import annotations

import pytest

from kramabench.files import OutsideRoot, inside


@pytest.fixture
def root(tmp_path):
    r = tmp_path / "root"
    (r / "solutions").mkdir(parents=True)
    (r / "solutions" / "a.py").write_text("print(1)")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret.txt").write_text("host secret")
    (outside / "sols").mkdir()
    (outside / "sols" / "b.py").write_text("print(2)")
    (r / "solutions" / "leak.py").symlink_to(outside / "secret.txt")
    (r / "solutions" / "up").symlink_to("../..")
    (r / "shared").symlink_to(outside / "sols")
    (r / "top-link.txt").symlink_to(
        outside / "secret.txt"
    )  # a top-level link: how roots are assembled from shared data
    return r


@pytest.mark.parametrize("rel,why", [
    ("/etc/passwd", "is an absolute path"),
    ("../../../../../../etc/shadow", "climbs out with '..'"),
    ("solutions/../../x.py", "climbs out with '..'"),
    ("~/.ssh/id_rsa", "is an absolute path"),
    ("C:\\Windows\\x.py", "is an absolute path"),
    ("file:///etc/passwd", "is a URL, not a path"),
    ("solutions/leak.py", "leads out through a symbolic link"),
    ("solutions/up/elsewhere/secret.txt", "leads out through a symbolic link"),
    ("", "is empty"),
    ("top-link.txt", "leads out through a symbolic link"),
    ("a\x00b", "holds a NUL byte"),
])  # fmt: skip
def test_paths_that_lead_out_are_refused(root, rel, why):
    with pytest.raises(OutsideRoot) as e:
        inside(root, rel)
    assert str(e.value) == why


def test_paths_inside_and_through_a_top_level_link(root):
    assert inside(root, "solutions/a.py") == root / "solutions" / "a.py"
    assert inside(root, "./solutions//a.py") == root / "solutions" / "a.py"
    assert inside(root, "solutions/missing.py") == root / "solutions" / "missing.py"  # need not exist
    assert inside(root, "shared/b.py") == root / "shared" / "b.py"  # the linked folder counts as the root's
