"""A real server and a real browser for tests: ``searchengine serve`` on a free
loopback port, and Debian's headless ``chromium`` driven through its
``chromedriver`` by Selenium (``.ci/run`` installs both). Outside CI a test
that needs the browser is skipped when it is missing; in CI (``CI`` set) a
missing browser is a failure.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


@contextmanager
def serving(index_dir: Path, *options: str):
    """Run ``searchengine serve --port 0`` over ``index_dir`` (plus ``options``);
    yield ``(process, base URL)`` and stop the server afterwards."""
    process = subprocess.Popen(
        [sys.executable, "-m", "searchengine", "serve", "--port", "0", "--index-dir", str(index_dir), *options],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        base = None
        for line in process.stderr:  # the first line names the address
            match = re.search(r"on (http://127\.0\.0\.1:\d+)/", line)
            if match:
                base = match.group(1)
                break
        if base is None:
            pytest.fail("the server did not say where it listens")
        # keep reading its log so that a full pipe never blocks the server
        threading.Thread(target=process.stderr.read, daemon=True).start()
        yield process, base
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


def browser_missing() -> str | None:
    """Why a browser test cannot run here, or ``None``."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            return f"{path} not found (apt-get install chromium chromium-driver)"
    if importlib.util.find_spec("selenium") is None:
        return "selenium is not installed (pip install '.[test]')"
    return None


@contextmanager
def chromium(profile: Path, page_load_seconds: float, *, capabilities: dict | None = None):
    """Headless Chromium with its profile in ``profile``; yields the Selenium driver.

    Skips the test when the browser is missing (fails it under ``CI``).
    """
    missing = browser_missing()
    if missing:
        if os.environ.get("CI"):
            pytest.fail(missing)
        pytest.skip(missing)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for name, value in (capabilities or {}).items():
        options.set_capability(name, value)
    for argument in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1280,1000",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    try:
        driver.set_page_load_timeout(page_load_seconds)
        yield driver
    finally:
        driver.quit()
