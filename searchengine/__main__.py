"""``python -m searchengine``: the same as the ``searchengine`` command."""

from searchengine.cli import run

run()
