"""`python app.py --check`: each check passes on this install and fails, naming the fix, on an
install broken in its way (a wrong pin, a corrupt shard, a changed baseline, a taken port, an
old Python); the command exits 1 and prints every failure."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys

import pytest
from PIL import Image

import core.model.manifest as manifest
import tabs.preflight as preflight
from tests.conftest import REPO

pytestmark = pytest.mark.app


def test_this_install_passes():
    results = preflight.run_checks("127.0.0.1", 0)
    assert [(c.name, c.ok) for c in results] == [
        ("python", True), ("packages", True), ("model", True), ("figure", True), ("port", True)]


def test_pins_are_read_from_requirements():
    pins = preflight.pinned()
    assert pins["torch"] == "2.13.0" and "gradio" in pins and "pytest" not in pins


def test_a_wrong_or_missing_package_fails():
    c = preflight.check_packages({"numpy": "0.0.1", "no_such_package_xyz": "1.0"})
    assert not c.ok and "numpy" in c.found and "no_such_package_xyz" in c.found
    assert "pip install -r requirements.txt" in c.fix


def test_an_old_python_fails():
    assert not preflight.check_python((3, 9)).ok and preflight.check_python((3, 11)).ok


def test_a_corrupt_shard_fails(tmp_path, monkeypatch):
    shutil.copytree(manifest.ASSET_DIR, tmp_path / "model")
    shard = next(p for p in (tmp_path / "model").glob("*.safetensors"))
    data = bytearray(shard.read_bytes())
    data[-1] ^= 0xFF  # same size, one bit pattern changed
    shard.write_bytes(bytes(data))
    monkeypatch.setattr(manifest, "ASSET_DIR", tmp_path / "model")
    c = preflight.check_model()
    assert not c.ok and shard.name in c.found and "sha256" in c.found and "git checkout" in c.fix
    shard.unlink()
    c = preflight.check_model()
    assert not c.ok and "missing" in c.found


def test_a_changed_baseline_fails(tmp_path, monkeypatch):
    src = preflight.BASELINES / f"{preflight.CHECK_FIGURE}.png"
    img = Image.open(src).convert("RGB")
    img.paste((255, 0, 0), (0, 0, img.width // 3, img.height // 3))
    img.save(tmp_path / src.name)
    monkeypatch.setattr(preflight, "BASELINES", tmp_path)
    c = preflight.check_figure()
    assert not c.ok and "differs" in c.found


def test_a_taken_port_fails():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        c = preflight.check_port("127.0.0.1", port)
    assert not c.ok and str(port) in c.found and f"--port {port + 1}" in c.fix


def test_the_command_exits_1_and_prints_each_failure():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        out = subprocess.run([sys.executable, "app.py", "--check", "--port", str(port)],
                             cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "FAIL port" in out.stdout and "fix:" in out.stdout
    assert "4 of 5 checks passed" in out.stdout
