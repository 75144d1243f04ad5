"""The CPU budget (fastgelu._threads): affinity mask and cgroup CPU quota, read from fake cgroup trees."""
import os
import subprocess
import sys

import pytest

from fastgelu import _threads


def tree(root, cgroup_lines, files):
    """A fake "/" under root: proc/self/cgroup and files under sys/fs/cgroup."""
    (root / "proc/self").mkdir(parents=True)
    (root / "proc/self/cgroup").write_text("\n".join(cgroup_lines) + "\n")
    for rel, text in files.items():
        path = root / "sys/fs/cgroup" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")
    (root / "sys/fs/cgroup").mkdir(parents=True, exist_ok=True)
    return str(root)


@pytest.fixture
def eight_cpus(monkeypatch):
    monkeypatch.setattr(_threads, "affinity_count", lambda: 8)


def test_v2_quota_rounds_up(tmp_path, eight_cpus):
    root = tree(tmp_path, ["0::/kubepods/pod1"], {"kubepods/pod1/cpu.max": "150000 100000"})
    assert _threads.cgroup_quota(root) == (1.5, "cgroup v2 cpu.max 150000 100000")
    n, why = _threads.budget(root)
    assert n == 2 and "cpu.max" in why


def test_v2_tightest_ancestor_wins(tmp_path, eight_cpus):
    root = tree(tmp_path, ["0::/a/b"], {"cpu.max": "max 100000", "a/cpu.max": "300000 100000",
                                        "a/b/cpu.max": "max 100000"})
    assert _threads.budget(root)[0] == 3


def test_v2_no_limit(tmp_path, eight_cpus):
    root = tree(tmp_path, ["0::/"], {"cpu.max": "max 100000"})
    assert _threads.cgroup_quota(root) is None
    assert _threads.budget(root) == (8, f"affinity mask (8 of {os.cpu_count()} CPUs)")


def test_v2_container_sees_its_cgroup_as_root(tmp_path, eight_cpus):
    # inside a cgroup namespace the path in proc/self/cgroup may not exist under the mount
    root = tree(tmp_path, ["0::/../../system.slice/x"], {"cpu.max": "50000 100000"})
    assert _threads.budget(root)[0] == 1  # half a CPU still gets one thread


def test_v1_quota(tmp_path, eight_cpus):
    root = tree(tmp_path, ["4:memory:/docker/abc", "2:cpu,cpuacct:/docker/abc"],
                {"cpu,cpuacct/docker/abc/cpu.cfs_quota_us": "400000",
                 "cpu,cpuacct/docker/abc/cpu.cfs_period_us": "100000"})
    assert _threads.cgroup_quota(root)[0] == 4.0
    n, why = _threads.budget(root)
    assert n == 4 and "cfs_quota_us" in why


def test_v1_unlimited_and_garbage(tmp_path, eight_cpus):
    root = tree(tmp_path, ["2:cpu,cpuacct:/"], {"cpu,cpuacct/cpu.cfs_quota_us": "-1",
                                                "cpu,cpuacct/cpu.cfs_period_us": "100000"})
    assert _threads.cgroup_quota(root) is None
    root2 = tree(tmp_path / "g", ["0::/"], {"cpu.max": "lots"})
    assert _threads.cgroup_quota(root2) is None


def test_quota_above_affinity_changes_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(_threads, "affinity_count", lambda: 2)
    root = tree(tmp_path, ["0::/"], {"cpu.max": "800000 100000"})
    assert _threads.budget(root)[0] == 2


def test_no_cgroup_filesystem(tmp_path, eight_cpus):
    assert _threads.cgroup_quota(str(tmp_path)) is None
    assert _threads.budget(str(tmp_path))[0] == 8


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs sched_setaffinity and at least two CPUs in this process's mask")
def test_affinity_mask_caps_the_budget_and_the_team(tmp_path):
    """A process restricted to one CPU (as by taskset) counts one, takes a budget of one thread whatever the
    machine's CPU count, and its calls use one thread; a mask of two keeps two."""
    import fastgelu
    code = ("import os, sys; os.sched_setaffinity(0, set(sorted(os.sched_getaffinity(0))[:int(sys.argv[1])])); "
            "import fastgelu; from fastgelu import _threads; c = fastgelu.get_config(); "
            "print(_threads.affinity_count(), _threads.budget()[0], c['num_threads'], c['threads_from'])")
    for k in (1, 2):
        out = subprocess.run([sys.executable, "-c", code, str(k)], capture_output=True, text=True, check=True,
                             env={**{n: v for n, v in os.environ.items() if n != "OMP_NUM_THREADS"},
                                  "FASTGELU_CGROUP_ROOT": str(tmp_path)}).stdout.split(maxsplit=3)
        assert out[:2] == [str(k), str(k)], out
        if fastgelu.get_config()["openmp"]:
            assert int(out[2]) <= k, out
            if k == 1:
                assert "affinity mask (1 of" in out[3], out


def run(code, **env):
    full = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "FASTGELU_CGROUP_ROOT")}
    full.update(env)
    return subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True,
                          check=True).stdout.strip()


def test_import_applies_quota(tmp_path):
    import fastgelu
    if not fastgelu.get_config()["openmp"]:
        pytest.skip("built without OpenMP")
    root = tree(tmp_path, ["0::/"], {"cpu.max": "50000 100000"})
    code = ("import fastgelu; c = fastgelu.get_config(); print(c['num_threads'], '|', c['threads_from']); "
            "fastgelu.set_num_threads(2); print(fastgelu.get_num_threads())")
    first, second = run(code, FASTGELU_CGROUP_ROOT=root).splitlines()
    assert first.startswith("1 | 1: cgroup v2 cpu.max 50000 100000"), first
    assert second == "2"  # set_num_threads overrides the budget
    # OMP_NUM_THREADS is the user's choice: the quota is not applied on top of it
    # (import fills the 16-bit tables with parallel calls: on a busy machine those may start a back-off,
    # which is not what this test is about)
    out = run("import fastgelu; fastgelu.ufuncs._kernels._backoff(reset=True); "
              "print(fastgelu.get_num_threads(), '|', fastgelu.get_config()['threads_from'])",
              FASTGELU_CGROUP_ROOT=root, OMP_NUM_THREADS="2")
    assert out == "2 | 2: OMP_NUM_THREADS=2"
