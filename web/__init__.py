"""The web app's old import path, ``from web import create_app``: the app is :mod:`searchengine.web`."""

# Kept because earlier docs named this import (and web:create_app for WSGI servers).
from searchengine.web import create_app

__all__ = ["create_app"]
