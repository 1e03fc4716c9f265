"""Finding the mounts left under a directory: the kernel's mountinfo table read as it writes it
(octal escapes), and only what lies inside the directory, deepest first."""

from __future__ import annotations

from pathlib import Path

from lockstep.runtimes.local.volumes.mounts import mount_points, mounts_under

TABLE = """\
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw
40 27 0:50 / /data/pods/w/p/volumes/nfs-0 rw - nfs server:/export rw
41 40 0:51 / /data/pods/w/p/volumes/nfs-0/inner rw - tmpfs tmpfs rw
42 27 0:52 / /data/pods/w/p\\040two/volumes/s3-0 rw - fuse.s3fs s3fs rw
43 27 0:53 / /data/pods/w rw - tmpfs tmpfs rw
44 27 0:54 / /data/pods/wx/volumes/x rw - tmpfs tmpfs rw
"""


def test_mount_points_undo_the_kernels_escapes() -> None:
    assert Path("/data/pods/w/p two/volumes/s3-0") in mount_points(TABLE)
    assert len(mount_points(TABLE)) == 6


def test_only_mounts_inside_the_directory_deepest_first(tmp_path: Path) -> None:
    table = tmp_path / "mountinfo"
    table.write_text(TABLE)
    assert mounts_under(Path("/data/pods/w"), mountinfo=table) == [
        Path("/data/pods/w/p/volumes/nfs-0/inner"),
        Path("/data/pods/w/p two/volumes/s3-0"),
        Path("/data/pods/w/p/volumes/nfs-0"),
    ]
    assert mounts_under(Path("/elsewhere"), mountinfo=table) == []
    assert mounts_under(Path("/data"), mountinfo=tmp_path / "missing") == []
