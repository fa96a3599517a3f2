"""The documentation builds with mkdocs in strict mode, and every environment has its page."""
import subprocess
import sys
from pathlib import Path

from arena_envs.registration import ENVIRONMENTS

ROOT = Path(__file__).resolve().parents[1]


def test_mkdocs_builds_strict(tmp_path):
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "envs" / "auction" / "index.html").exists()


def test_every_environment_is_documented():
    pages = "\n".join(p.read_text() for p in (ROOT / "docs").rglob("*.md"))
    missing = [name for name in ENVIRONMENTS if f"`{name}`" not in pages]
    assert not missing, f"no docs page mentions {missing}"
